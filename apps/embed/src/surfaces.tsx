import { deferred, loading } from './deferred.js';
import { ChatPanel } from './chat/ChatPanel.deferred.js';
import type { DashboardViewProps } from './Dashboard.js';
import type { CommentPanelProps } from './comments/CommentPanel.js';
import type { Route } from './page.js';

/**
 * The parts of the embed that `ready` does not wait for, each its own chunk (issue 22): the dashboard (its grid,
 * widgets and charts), the comment panel and the chat. The entry holds the renderer (Preact), the session and the
 * host channel only; boot() starts the chunks of the first route right after the first render, which sent `ready`.
 */
const loadDashboard = () => import('./Dashboard.js').then((module) => module.DashboardView);
const loadCommentPanel = () => import('./comments/CommentPanel.js').then((module) => module.CommentPanel);

export const DashboardView = deferred<DashboardViewProps>(loadDashboard, loading);
export const CommentPanel = deferred<CommentPanelProps>(loadCommentPanel, loading);

/**
 * Starts loading what `route` shows first (a dashboard, and its comment panel when the session allows comments;
 * the chat), without waiting for it.
 *
 * @example
 * preloadSurface(parseRoute(location.pathname), false);
 */
export function preloadSurface(route: Route, withComments: boolean): void {
  if (route.kind === 'dashboard' || route.kind === 'workbook' || (route.kind === 'app' && route.publicId !== undefined)) {
    DashboardView.preload();
    if (withComments) CommentPanel.preload();
  }
  if (route.kind === 'chat') ChatPanel.preload();
}
