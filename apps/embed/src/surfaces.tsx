import { useEffect, useState } from 'react';
import type { ComponentType, ReactNode } from 'react';
import type { DashboardViewProps } from './Dashboard.js';
import type { CommentPanelProps } from './comments/CommentPanel.js';
import type { ChatPanelProps } from './chat/ChatPanel.js';
import type { Route } from './page.js';

/**
 * The parts of the embed that `ready` does not wait for, each its own chunk (issue 22): the dashboard (its grid,
 * widgets and charts), the comment panel and the chat. The entry holds the renderer (Preact), the session and the
 * host channel only; boot() starts the chunks of the first route right after the first render, which sent `ready`.
 */
const loadDashboard = () => import('./Dashboard.js').then((module) => module.DashboardView);
const loadCommentPanel = () => import('./comments/CommentPanel.js').then((module) => module.CommentPanel);
const loadChatPanel = () => import('./chat/ChatPanel.js').then((module) => module.ChatPanel);

/**
 * A component of a chunk loaded on first use, shown by `fallback` until then. Not lazy(): under React, a Suspense
 * boundary held back content that resolved soon after its fallback showed (React's 300 ms fallback throttle), which
 * delayed `dashboard-loaded` by that much; here a chunk that arrived is shown at the next render, whatever the renderer.
 */
function deferred<P extends object>(load: () => Promise<ComponentType<P>>, fallback: (props: P) => ReactNode): ComponentType<P> & { preload(): void } {
  let loaded: ComponentType<P> | undefined;
  let pending: Promise<ComponentType<P>> | undefined;
  const preload = () => {
    pending ??= load().then((component) => {
      loaded = component;
      return component;
    });
    return pending;
  };
  function Deferred(props: P) {
    const [component, setComponent] = useState<ComponentType<P> | undefined>(() => loaded);
    const [failure, setFailure] = useState<unknown>(undefined);
    useEffect(() => {
      if (component !== undefined) return;
      // Even a chunk that arrived between this render and this effect is taken: the promise answers at once.
      let live = true;
      preload().then((arrived) => live && setComponent(() => arrived), (error: unknown) => live && setFailure(error ?? 'the chunk did not load'));
      return () => {
        live = false;
      };
    }, [component]);
    if (component !== undefined) {
      const Component = component;
      return <Component {...props} />;
    }
    if (failure !== undefined) return <p className="status error" role="alert">{failure instanceof Error ? failure.message : String(failure)}</p>;
    return <>{fallback(props)}</>;
  }
  return Object.assign(Deferred, { preload: () => void preload().catch(() => undefined) });
}

const loading = ({ t }: { t: DashboardViewProps['t'] }) => <p className="status" role="status">{t('loading')}</p>;

export const DashboardView = deferred<DashboardViewProps>(loadDashboard, loading);
export const CommentPanel = deferred<CommentPanelProps>(loadCommentPanel, loading);
export const ChatPanel = deferred<ChatPanelProps>(loadChatPanel, loading);

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
