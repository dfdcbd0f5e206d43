import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

/** A TCP proxy in front of a server, whose connections a test can drop as a network (or a restart) would. */
export interface CutProxy {
  /** `http://127.0.0.1:<port>`: the proxied server as the browser reaches it. */
  origin: string;
  /** Drops every open connection with a TCP reset, as a lost network does (no HTTP goodbye, no stream.end). */
  cut(): void;
  /** Holds new connections unanswered (accepted, not passed on) until `release()`: the network is still down. */
  hold(): void;
  /** Resets new connections at once (the server is down: nothing listens), until `release()`. */
  refuse(): void;
  /** Passes held and new connections on again (and stops refusing). */
  release(): void;
  /** Connections held right now. */
  held(): number;
  close(): Promise<void>;
}

/**
 * A cuttable proxy to `127.0.0.1:<port>` (tests of what a client does when its connection is lost: the embed, svc with its database). Bytes pass
 * through untouched; only the connections' lives are the test's.
 *
 * @example
 * const proxy = await cutProxy(port);
 * proxy.hold();
 * proxy.cut();
 * // ... what happens while the client is away ...
 * proxy.release();
 */
export async function cutProxy(port: number): Promise<CutProxy> {
  const open = new Set<Socket>();
  let waiting: Socket[] | undefined;
  let refusing = false;
  const pass = (client: Socket) => {
    const upstream = connect(port, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
    client.resume();
  };
  const server = createServer({ pauseOnConnect: true }, (client) => {
    if (refusing) client.resetAndDestroy();
    else if (waiting === undefined) pass(client);
    else {
      waiting.push(client);
      client.on('error', () => client.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      for (const socket of [...open]) socket.resetAndDestroy();
    },
    hold() {
      waiting ??= [];
    },
    refuse() {
      refusing = true;
    },
    release() {
      refusing = false;
      const held = waiting ?? [];
      waiting = undefined;
      for (const client of held) if (!client.destroyed) pass(client);
    },
    held: () => (waiting ?? []).filter((client) => !client.destroyed).length,
    async close() {
      for (const socket of [...open, ...(waiting ?? [])]) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
