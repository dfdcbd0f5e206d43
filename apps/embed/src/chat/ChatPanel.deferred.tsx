import { deferred, loading } from '../deferred.js';
import type { ChatPanelProps } from './ChatPanel.js';

/** The chat, its own chunk (issue 22): the chat route and an AI widget share this one loader (surfaces.tsx). */
export const ChatPanel = deferred<ChatPanelProps>(() => import('./ChatPanel.js').then((module) => module.ChatPanel), loading);
