import type { MessageKey } from '../i18n.js';

/** The embed's `t()` as the panel receives it (i18n.ts `translator`). */
export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string;
