import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { fetchCurrentSession } from './api.js';
import { App } from './App.js';
import { createHostChannel } from './host.js';
import { normalizePath, parseRoute, readPageConfig, readUrlOptions, stripSessionFromUrl } from './page.js';
import { browserPreferences } from './preferences.js';
import { EmbedSession } from './session.js';
import { preloadSurface } from './surfaces.js';
import type { BootRequests } from './session.js';
import './styles.css';

/** What index.html's boot script started before this bundle ran; taken once (the token must live in EmbedSession only). */
function takeBootRequests(): BootRequests | undefined {
  const holder = window as { svcBoot?: BootRequests };
  const boot = holder.svcBoot;
  delete holder.svcBoot;
  return boot;
}

/**
 * Boots the embed (issue 6): reads the URL, redeems the session id it carries (signed mode) or relies on the
 * console cookie (private mode), strips the id from the address, then mounts the surface. A boot that cannot
 * authenticate tells the host with a fatal `svc:event:error` (there is no `ready`: nothing was authenticated).
 * The page's boot script (index.html) has usually begun the exchange and the first reads already (issue 22): they
 * are adopted here. Until `ready`, the main thread is kept for what `ready` waits for (issue 22, measured on a busy
 * 2-core machine): the surface's chunks (the dashboard's grid and widgets, the comment panel, the chat) are
 * fetched and run after the first render, where running the dashboard's chunk as soon as it arrived held back the
 * boot script's reads and then the first render by 20-40 ms.
 */
async function boot(): Promise<void> {
  performance.mark('svc:bundle');
  const early = takeBootRequests();
  const config = readPageConfig();
  const url = readUrlOptions(new URL(location.href));
  // The `path` option of the SDK opens an in-embed path first (surfaces app and chat).
  const initialRoute = parseRoute(url.path !== undefined ? normalizePath(url.path) : location.pathname);
  // An admin's preview ("View as a customer") is framed by the console, on svc's own origin, and by nothing else
  // (the page's frame-ancestors say so): it talks to that origin only.
  const channel = createHostChannel(window, config.preview === true ? [location.origin] : config.allowedOrigins, initialRoute.surface);
  const lapseListeners = new Set<() => void>();
  const isSigned = early !== undefined ? early.signed : url.sessionId !== undefined;
  const session = new EmbedSession(isSigned ? 'signed' : 'private', {
    expiring: (expiresAt, expiresInMs) => channel.emit('svc:event:session-expiring', { expiresAt, expiresInMs }),
    expired: (expiredAt) => {
      channel.emit('svc:event:session-expired', { expiredAt });
      for (const listener of lapseListeners) listener();
    },
  });
  stripSessionFromUrl();
  document.addEventListener('visibilitychange', () => session.checkClock());
  window.addEventListener('focus', () => session.checkClock());

  const root = document.getElementById('root')!;
  const fail = (message: string, name: string) => {
    root.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'status error';
    p.setAttribute('role', 'alert');
    p.textContent = message;
    root.append(p);
    channel.emit('svc:event:error', { message, name, context: 'embed-auth', fatal: true });
  };

  try {
    if (early?.exchange !== undefined) await session.adoptExchange(early.exchange);
    else if (url.sessionId !== undefined) await session.exchange(url.sessionId);
    if (early !== undefined) session.adoptReads(early.reads);
    // While the reads are on their way: the browser's preferences (in a browser without Temporal, the time zone
    // takes the frame's first Intl formatter, which loads ICU's data).
    const browser = browserPreferences();
    const { session: current } = await fetchCurrentSession(session);
    if (current === null) {
      fail('This embed has no session: open it with a session id (signed embedding) or sign in to svc (private embedding).', 'EmbedAuthenticationError');
      return;
    }
    // Preact renders and commits at once: `ready` has been sent (App's layout effect) when render() returns.
    performance.mark('svc:render');
    createRoot(root).render(
      <StrictMode>
        <App channel={channel} session={session} current={current} initialRoute={initialRoute} url={url} browser={browser} onLapse={(listener) => { lapseListeners.add(listener); }} />
      </StrictMode>,
    );
    // The comment panel is shown only to a signed embed user of an account that allows comments (App.tsx).
    preloadSurface(initialRoute, current.allowEmbedComments && current.embedUserId !== null);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), error instanceof Error ? error.name : 'Error');
  }
}

void boot();
