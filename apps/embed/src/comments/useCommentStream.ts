import { useEffect, useRef } from 'react';
import type { EmbedSession } from '../session.js';
import { CommentStream } from './commentStream.js';
import type { CommentStreamListener } from './commentStream.js';

/**
 * Keeps the dashboard's live comment stream open while the panel is mounted (open or closed: the closed panel counts
 * new threads), for the listener's latest callbacks. A new `credentialKey` (the host swapped the session in with
 * set-session) reconnects at once with the new token, from the last event received.
 *
 * @example
 * useCommentStream(session, 'q1-review', credentialKey, { ready, reset, event, stopped, interrupted });
 */
export function useCommentStream(session: EmbedSession, publicId: string, credentialKey: number, listener: CommentStreamListener): void {
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  const stream = useRef<CommentStream | undefined>(undefined);

  useEffect(() => {
    const opened = new CommentStream(session, publicId, {
      ready: (resumed) => latest.current.ready(resumed),
      reset: () => latest.current.reset(),
      event: (event) => latest.current.event(event),
      stopped: (reason) => latest.current.stopped(reason),
      interrupted: (retryInMs) => latest.current.interrupted(retryInMs),
    });
    stream.current = opened;
    opened.connect();
    return () => {
      opened.close();
      if (stream.current === opened) stream.current = undefined;
    };
  }, [session, publicId]);

  const connectedWith = useRef(credentialKey);
  useEffect(() => {
    if (connectedWith.current === credentialKey) return;
    connectedWith.current = credentialKey;
    stream.current?.connect();
  }, [credentialKey]);
}
