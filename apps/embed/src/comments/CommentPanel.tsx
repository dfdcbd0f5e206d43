import type { EmbedSession } from '../session.js';
import type { Formatters } from '../format.js';
import type { MessageKey } from '../i18n.js';

/** What the comment panel gets from the embed (issue 6 scope 4). */
export interface CommentPanelProps {
  session: EmbedSession;
  /** The dashboard whose threads are shown (SPEC B: `dashboardId` is its publicId). */
  publicId: string;
  /** The viewer's embed user id (for "you"), from GET /api/v1/embed/session. */
  viewerId: number | null;
  t: (key: MessageKey, values?: Record<string, string | number>) => string;
  format: Formatters;
  /** Bumped by svc:action:refresh: the panel reloads its first page. */
  refreshKey: number;
  /** A failure worth telling the host (never a 401: the session reports that itself). */
  onError(error: unknown, context: string): void;
}

export function CommentPanel(props: CommentPanelProps) {
  return <section aria-label={props.t('comments')} className="comments"><h2>{props.t('comments')}</h2></section>;
}
