import { useLayoutEffect, useRef, useState } from 'react';
import { askQuestion, runAppQuery } from '../api.js';
import type { Dashboard } from '../api.js';
import type { AiQueryEvent } from '@svc/protocol';
import type { EmbedSession } from '../session.js';
import { useDashboardData } from './data.js';

/**
 * The bridge an APP dashboard's code gets as `window.svc` (written into its document before its own markup):
 * `svc.query(semanticQuery)` and `svc.ask(question)` return promises of rows; `svc.loaded()` is optional.
 * Calls travel by postMessage to the embed, which alone holds the session.
 */
export const APP_BRIDGE = `<script>(function () {
  var next = 0, pending = {};
  addEventListener('message', function (event) {
    if (event.source !== parent || !event.data || event.data.svcApp !== 'reply') return;
    var call = pending[event.data.id];
    if (!call) return;
    delete pending[event.data.id];
    if (event.data.error) call[1](new Error(event.data.error)); else call[0](event.data.result);
  });
  function call(method, args) {
    return new Promise(function (resolve, reject) {
      var id = ++next;
      pending[id] = [resolve, reject];
      parent.postMessage({ svcApp: 'call', id: id, method: method, args: args }, '*');
    });
  }
  window.svc = {
    query: function (query) { return call('query', { query: query }); },
    ask: function (question) { return call('ask', { question: question }); }
  };
})();</script>`;

/** The app's document: its `html`, or `files[entry]` with the files it names by `<script src>` and `<link href>` inlined. */
export function appDocument(app: NonNullable<Dashboard['config']['app']>): string {
  const files = app.files ?? {};
  let html = app.html ?? files[app.entry ?? 'index.html'] ?? '';
  const safe = (text: string) => text.replace(/<\/(script|style)/gi, '<\\/$1');
  html = html.replace(/<script([^>]*)\ssrc=["']([^"']+)["']([^>]*)>\s*<\/script>/gi, (whole, before: string, src: string, after: string) =>
    files[src] === undefined ? whole : `<script${before}${after}>${safe(files[src])}</script>`);
  html = html.replace(/<link([^>]*)\shref=["']([^"']+)["']([^>]*)>/gi, (whole, before: string, href: string, after: string) =>
    files[href] === undefined || !/stylesheet/i.test(before + after) ? whole : `<style>${safe(files[href])}</style>`);
  return `${APP_BRIDGE}${html}`;
}

export interface AppViewProps {
  dashboard: Dashboard;
  session: EmbedSession;
  timezone: string;
  onMounted(): void;
  onAiQuery(event: AiQueryEvent): void;
  onError(error: unknown, context: string): void;
}

/**
 * An APP dashboard (`config.kind: APP`): its code runs in svc's app frame, sandboxed with scripts only (an opaque
 * origin: no cookies, no storage of svc's, no network), and asks for data through the bridge. An app that navigates
 * its frame away loses it: the frame is removed and the host gets an `error` event of context `app-navigation`.
 *
 * @example
 * <AppView dashboard={dashboard} session={session} timezone="UTC" onMounted={report} onAiQuery={relay} onError={emit} />
 */
export function AppView({ dashboard, session, timezone, onMounted, onAiQuery, onError }: AppViewProps) {
  const { t } = useDashboardData();
  const frame = useRef<HTMLIFrameElement>(null);
  const callbacks = useRef({ onMounted, onAiQuery, onError, timezone });
  callbacks.current = { onMounted, onAiQuery, onError, timezone };
  // Per frame, not per run of the effect below (a renewed session runs it again on the same frame).
  const lifecycle = useRef({ sourceSent: false, stopped: false });
  const [leftFor, setLeftFor] = useState<string>();
  const source = appDocument(dashboard.config.app ?? {});

  // Listening from the commit that creates the frame (a layout effect): Preact runs plain effects after the next
  // paint, by which time a cached app frame may have sent its `frame-ready` (and a refused navigation its report).
  useLayoutEffect(() => {
    const chatId = `app-${dashboard.publicId}-${Date.now()}`;
    const reply = (message: Record<string, unknown>) => frame.current?.contentWindow?.postMessage({ svcApp: 'reply', ...message }, '*');
    const stop = (target: string) => {
      if (lifecycle.current.stopped) return;
      lifecycle.current.stopped = true;
      setLeftFor(target);
      callbacks.current.onError(new Error(`The app tried to navigate its frame to ${target}; svc removed the frame.`), 'app-navigation');
    };
    // The app frame cannot be kept from starting a navigation of itself (its origin is opaque, so the Navigation API
    // sends it no navigate event), but this page's frame-src 'self' refuses one to another origin, and reports that
    // here, where the app can neither prevent nor fake the event. The refusal left the browser's error page in the
    // frame: remove it rather than show it, and say why (docs/security.md, the app sandbox).
    const onViolation = (event: SecurityPolicyViolationEvent) => {
      if (event.effectiveDirective === 'frame-src' || event.effectiveDirective === 'child-src') stop(event.blockedURI || 'another origin');
    };
    const onMessage = (event: MessageEvent) => {
      // Only the app's own frame; its origin is opaque ("null"), so the window is what identifies it.
      if (lifecycle.current.stopped || frame.current === null || event.source !== frame.current.contentWindow) return;
      const data = event.data as { svcApp?: string; id?: number; method?: string; args?: { query?: unknown; question?: unknown } } | null;
      if (data?.svcApp === 'frame-ready') {
        // A second frame-ready is a new document in the frame: the app navigated it to svc's app frame again (its
        // own origin passes frame-src 'self'). Giving that document the source too would let the app reload forever.
        if (lifecycle.current.sourceSent) {
          stop('svc\'s app frame again');
          return;
        }
        lifecycle.current.sourceSent = true;
        frame.current.contentWindow!.postMessage({ svcApp: 'source', html: source }, '*');
        return;
      }
      if (data?.svcApp === 'mounted') {
        callbacks.current.onMounted();
        return;
      }
      if (data?.svcApp !== 'call' || typeof data.id !== 'number') return;
      const id = data.id;
      if (data.method === 'query') {
        runAppQuery(session, dashboard.publicId, data.args?.query, callbacks.current.timezone).then(
          (result) => reply({ id, result }),
          (error: unknown) => {
            reply({ id, error: error instanceof Error ? error.message : String(error) });
            callbacks.current.onError(error, 'app-query');
          },
        );
      } else if (data.method === 'ask' && typeof data.args?.question === 'string') {
        const question = data.args.question;
        callbacks.current.onAiQuery({ query: question, status: 'submitted', chatId });
        askQuestion(session, { question, chatId, publicId: dashboard.publicId, timezone: callbacks.current.timezone }).then((answer) => {
          callbacks.current.onAiQuery({ query: question, status: 'completed', chatId });
          reply({ id, result: answer });
        }, (error: unknown) => {
          callbacks.current.onAiQuery({ query: question, status: 'error', chatId });
          reply({ id, error: error instanceof Error ? error.message : String(error) });
        });
      } else {
        reply({ id, error: `unknown bridge method ${String(data.method)}` });
      }
    };
    window.addEventListener('message', onMessage);
    document.addEventListener('securitypolicyviolation', onViolation);
    return () => {
      window.removeEventListener('message', onMessage);
      document.removeEventListener('securitypolicyviolation', onViolation);
    };
  }, [dashboard.publicId, session, source]);

  if (leftFor !== undefined) {
    return <p className="status error app-stopped" role="alert">{t('dashboardError', { message: `its app tried to navigate to ${leftFor}` })}</p>;
  }
  return <iframe ref={frame} className="app-frame" title={dashboard.title ?? dashboard.publicId} src="/embed/app-frame" sandbox="allow-scripts" />;
}
