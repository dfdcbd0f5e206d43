import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';

/** One request a receiver got: its headers and its body as sent. */
export interface ReceivedWebhook {
  /** The path and query it was posted to. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A real local HTTP endpoint (node:http) that records what svc posts and answers with the status `answer` says. */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** The status of the next answers (default 200); may be changed at any time. */
  answer: (request: ReceivedWebhook) => number;
  /** How long to wait before answering (ms; default 0). */
  delayMs: number;
  close(): Promise<void>;
}

/**
 * Starts a receiver on 127.0.0.1 (any free port) at path `/hooks`.
 *
 * @example
 * const receiver = await startWebhookReceiver();
 * receiver.answer = () => 500;
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const state: Omit<WebhookReceiver, 'url' | 'close'> = { received: [], answer: () => 200, delayMs: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      state.received.push(entry);
      const status = state.answer(entry);
      setTimeout(() => response.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const receiver = state as WebhookReceiver;
  receiver.url = `http://127.0.0.1:${address.port}/hooks`;
  receiver.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return receiver;
}
