import { lazy } from 'react';
import type { Route } from './page.js';

/**
 * The parts of the embed that `ready` does not wait for, each its own chunk (issue 22): the dashboard (its grid,
 * widgets and charts), the comment panel and the chat. The entry holds React, the session and the host channel
 * only; boot() starts the chunk of the first route at once, so that it loads while the session is read.
 */
const loadDashboard = () => import('./Dashboard.js');
const loadCommentPanel = () => import('./comments/CommentPanel.js');
const loadChatPanel = () => import('./chat/ChatPanel.js');

export const DashboardView = lazy(() => loadDashboard().then((module) => ({ default: module.DashboardView })));
export const CommentPanel = lazy(() => loadCommentPanel().then((module) => ({ default: module.CommentPanel })));
export const ChatPanel = lazy(() => loadChatPanel().then((module) => ({ default: module.ChatPanel })));

/**
 * Starts loading what `route` shows first (a dashboard, and its comment panel when the session allows comments;
 * the chat), without waiting for it.
 *
 * @example
 * preloadSurface(parseRoute(location.pathname), false);
 */
export function preloadSurface(route: Route, withComments: boolean): void {
  const ignore = () => undefined;
  if (route.kind === 'dashboard' || route.kind === 'workbook' || (route.kind === 'app' && route.publicId !== undefined)) {
    loadDashboard().catch(ignore);
    if (withComments) loadCommentPanel().catch(ignore);
  }
  if (route.kind === 'chat') loadChatPanel().catch(ignore);
}
