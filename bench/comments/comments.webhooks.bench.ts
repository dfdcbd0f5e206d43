import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { importFile } from '../../apps/server/src/import/import.js';
import { generateEventId, generateWebhookSecret } from '../../apps/server/src/webhooks/webhooks.signing.js';
import { benchFlags, machine, startSvc, withFreshDatabase, withServers, writeResults } from '../harness.js';
import type { BenchDialect } from '../harness.js';

/** One run's figure: how many outbox deliveries one `svc serve` process posted per second to a local receiver. */
export interface WebhookDeliveryResult {
  dialect: BenchDialect;
  events: number;
  concurrency: number;
  seconds: number;
  deliveriesPerSecond: number;
  /** How many requests the receiver got (more than `events` would be a duplicate attempt). */
  received: number;
  machine: ReturnType<typeof machine>;
}

/**
 * Issue 23's bench: webhook deliveries per second to a local receiver (node:http, answering 204 at once). The outbox
 * of a fresh database is filled with `events` due deliveries of one endpoint (as comments would have written them),
 * then one `svc serve` (built JavaScript) starts with delivery on, and the clock runs from its start until the
 * receiver has them all. What is measured is svc's claim, signing, HTTP post and bookkeeping per delivery, at
 * SVC_WEBHOOK_CONCURRENCY attempts at a time; the process's start-up (about 1 s) is taken out by starting the clock
 * at the first delivery.
 *
 * @example
 * const result = await measureWebhookDeliveries('sqlite', 'postgres://postgres@127.0.0.1:5432/test', { events: 5000 });
 */
export async function measureWebhookDeliveries(
  dialect: BenchDialect, adminUrl: string, options: { events?: number; concurrency?: number } = {},
): Promise<WebhookDeliveryResult> {
  const events = options.events ?? 5000;
  const concurrency = options.concurrency ?? 8;
  let received = 0;
  let first = 0;
  let last = 0;
  let resolveAll: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (resolveAll = resolve));
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      if (received === 1) first = performance.now();
      response.writeHead(204).end();
      if (received === events) {
        last = performance.now();
        resolveAll();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  try {
    return await withFreshDatabase(dialect, adminUrl, async (database) => {
      const db = openDatabase(database.url);
      try {
        await migrateToLatest(db);
        const { refs } = await importFile(db.kysely, { accounts: [{ ref: 'acme', name: 'Acme', tenantName: 'acme', settings: { allowPrivateWebhookUrls: true } }] });
        const accountId = refs.acme!;
        const now = new Date().toISOString();
        const endpoint = await db.kysely.insertInto('webhook_endpoints').values({
          account_id: accountId, url, description: 'bench', event_types: '["comment.created"]', secret: generateWebhookSecret(), created_at: now, updated_at: now,
        }).returning('id').executeTakeFirstOrThrow();
        for (let start = 0; start < events; start += 500) {
          const rows = Array.from({ length: Math.min(500, events - start) }, (_, i) => ({
            account_id: accountId, endpoint_id: endpoint.id, event_id: generateEventId(), event_type: 'comment.created' as const,
            payload: JSON.stringify({ type: 'comment.created', timestamp: now, data: { embedTenant: 'acme', dashboardId: 'bench', threadId: start + i + 1, commentId: start + i + 1, mentions: [{ userId: 2, username: 'ben', externalId: 'ben-1' }] } }),
            status: 'pending' as const, final_attempt: null, next_attempt_at: now, created_at: now,
          }));
          await db.kysely.insertInto('webhook_deliveries').values(rows).execute();
        }
      } finally {
        await db.close();
      }
      const env = { SVC_WEBHOOK_DELIVERY: 'true', SVC_WEBHOOK_POLL_MS: '20', SVC_WEBHOOK_CONCURRENCY: String(concurrency), SVC_PREAGG_REFRESH: 'false' };
      return withServers([startSvc(database.url, env)], async () => {
        const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`only ${received} of ${events} deliveries arrived in 300 s`)), 300_000).unref());
        await Promise.race([all, timeout]);
        // Anything after the last one would be a duplicate attempt.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const seconds = (last - first) / 1000;
        return { dialect, events, concurrency, seconds, deliveriesPerSecond: Math.round((events - 1) / seconds), received, machine: machine() };
      });
    });
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

/**
 * `npm run bench -- comments --part webhooks [--dialects sqlite,postgres] [--events 5000] [--concurrency 8]`: the
 * figures as JSON, and in bench/results/comments-webhooks.json.
 */
export async function runWebhookBench(args: string[]): Promise<WebhookDeliveryResult[]> {
  const { dialects, adminUrl, flags } = await benchFlags(args, { dialects: 'sqlite,postgres', events: '5000', concurrency: '8' });
  const results: WebhookDeliveryResult[] = [];
  for (const dialect of dialects) {
    const result = await measureWebhookDeliveries(dialect, adminUrl, { events: Number(flags.events), concurrency: Number(flags.concurrency) });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    results.push(result);
  }
  writeResults('comments-webhooks', { date: new Date().toISOString(), machine: machine(), results });
  return results;
}
