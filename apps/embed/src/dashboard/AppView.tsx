import { useEffect, useRef } from 'react';
import { askQuestion, runAppQuery } from '../api.js';
import type { Dashboard } from '../api.js';
import type { AiQueryEvent } from '../chat/ChatPanel.js';
import type { EmbedSession } from '../session.js';

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
 * origin: no cookies, no storage of svc's, no network), and asks for data through the bridge.
 */
export function AppView({ dashboard, session, timezone, onMounted, onAiQuery, onError }: AppViewProps) {
  const frame = useRef<HTMLIFrameElement>(null);
  const callbacks = useRef({ onMounted, onAiQuery, onError, timezone });
  callbacks.current = { onMounted, onAiQuery, onError, timezone };
  const source = appDocument(dashboard.config.app ?? {});

  useEffect(() => {
    const chatId = `app-${dashboard.publicId}-${Date.now()}`;
    const reply = (message: Record<string, unknown>) => frame.current?.contentWindow?.postMessage({ svcApp: 'reply', ...message }, '*');
    const onMessage = (event: MessageEvent) => {
      // Only the app's own frame; its origin is opaque ("null"), so the window is what identifies it.
      if (frame.current === null || event.source !== frame.current.contentWindow) return;
      const data = event.data as { svcApp?: string; id?: number; method?: string; args?: { query?: unknown; question?: unknown } } | null;
      if (data?.svcApp === 'frame-ready') {
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
    return () => window.removeEventListener('message', onMessage);
  }, [dashboard.publicId, session, source]);

  return <iframe ref={frame} className="app-frame" title={dashboard.title ?? dashboard.publicId} src="/embed/app-frame" sandbox="allow-scripts" />;
}
