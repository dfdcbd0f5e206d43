import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { fetchCurrentSession } from './api.js';
import { App } from './App.js';
import { createHostChannel } from './host.js';
import { normalizePath, parseRoute, readPageConfig, readUrlOptions, stripSessionFromUrl } from './page.js';
import { EmbedSession } from './session.js';
import './styles.css';

/**
 * Boots the embed (issue 6): reads the URL, redeems the session id it carries (signed mode) or relies on the
 * console cookie (private mode), strips the id from the address, then mounts the surface. A boot that cannot
 * authenticate tells the host with a fatal `svc:event:error` (there is no `ready`: nothing was authenticated).
 */
async function boot(): Promise<void> {
  const config = readPageConfig();
  const url = readUrlOptions(new URL(location.href));
  // The `path` option of the SDK opens an in-embed path first (surfaces app and chat).
  const initialRoute = parseRoute(url.path !== undefined ? normalizePath(url.path) : location.pathname);
  const channel = createHostChannel(window, config.allowedOrigins, initialRoute.surface);
  const lapseListeners = new Set<() => void>();
  const session = new EmbedSession(url.sessionId !== undefined ? 'signed' : 'private', {
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
    if (url.sessionId !== undefined) await session.exchange(url.sessionId);
    const { session: current } = await fetchCurrentSession(session);
    if (current === null) {
      fail('This embed has no session: open it with a session id (signed embedding) or sign in to svc (private embedding).', 'EmbedAuthenticationError');
      return;
    }
    createRoot(root).render(
      <StrictMode>
        <App channel={channel} session={session} current={current} initialRoute={initialRoute} url={url} onLapse={(listener) => { lapseListeners.add(listener); }} />
      </StrictMode>,
    );
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), error instanceof Error ? error.name : 'Error');
  }
}

void boot();
