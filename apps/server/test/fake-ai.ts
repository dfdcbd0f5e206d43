import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * TEST DOUBLE of an OpenAI-compatible chat completions endpoint: a third party that cannot run here. It answers
 * `POST /chat/completions` with a `run_semantic_query` tool call picked by keywords of the user's question (or by
 * `respond`), and records each request so tests can check what svc sent (model, key, tools, no data).
 */
export interface FakeAi {
  baseUrl: string;
  requests: Array<{ headers: Record<string, string | string[] | undefined>; body: { model: string; messages: Array<{ role: string; content: string }>; tools: unknown[]; tool_choice: unknown } }>;
  /** Replaces the keyword rules: return the HTTP status and JSON body to send. */
  respond?: (question: string) => { status: number; body: unknown };
  close(): Promise<void>;
}

/** The tool call the double makes for a question. */
export function keywordQuery(question: string): Record<string, unknown> {
  const q = question.toLowerCase();
  if (q.includes('category')) return { measures: ['orders.revenue'], dimensions: ['products.category'], order: { 'orders.revenue': 'desc' } };
  if (q.includes('month')) return { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }] };
  if (q.includes('profit')) return { measures: ['orders.profit'] };
  return { measures: ['orders.count'] };
}

export function toolCallReply(query: unknown, content: string | null = 'Here is what I found.') {
  return {
    id: 'chatcmpl-fake', object: 'chat.completion', model: 'fake',
    choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_semantic_query', arguments: JSON.stringify(query) } }] } }],
  };
}

export async function startFakeAi(): Promise<FakeAi> {
  const fake: FakeAi = { baseUrl: '', requests: [], close: async () => undefined };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
        return;
      }
      const body = JSON.parse(text) as FakeAi['requests'][number]['body'];
      fake.requests.push({ headers: request.headers, body });
      const question = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
      const reply = fake.respond?.(question) ?? { status: 200, body: toolCallReply(keywordQuery(question)) };
      response.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
