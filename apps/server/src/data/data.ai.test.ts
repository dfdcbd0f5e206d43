import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { startFakeAi, toolCallReply } from '../../test/fake-ai.js';
import type { FakeAi } from '../../test/fake-ai.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';

/** The AI surfaces against a TEST DOUBLE of an OpenAI-compatible endpoint (apps/server/test/fake-ai.ts). */
describeEachDialect('questions in plain language (AI)', (t) => {
  const { orders, products } = demoRows();
  let fake: FakeAi;
  let app: FastifyInstance;
  let unconfigured: FastifyInstance;
  let s: Awaited<ReturnType<typeof seedAccount>>;
  let publicId: string;

  beforeAll(async () => {
    fake = await startFakeAi();
    app = await buildApp(testConfig({ ai: { baseUrl: fake.baseUrl, model: 'svc-test-model', apiKey: 'sk-test-secret' } }), { db: t().db });
    unconfigured = await buildApp(testConfig({ ai: { baseUrl: undefined } }), { db: t().db });
    publicId = `ask-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [
        { ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', dashboard: { publicId, status: 'published', allowEmbed: true, config: {} } }] },
        { ref: 'other', name: 'O' },
      ],
      embedTenants: [{ name: 'customer-a' }],
    });
  });

  afterAll(async () => {
    await app?.close();
    await unconfigured?.close();
    await fake?.close();
  });

  const ask = (target: FastifyInstance, headers: Record<string, string>, payload: unknown) =>
    target.inject({ method: 'POST', url: '/api/v1/embed/ai/query', headers, payload: payload as object });

  it("turns a question into the model's semantic query, checks it, runs it and answers with the rows", async () => {
    const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a' });
    const res = await ask(app, viewer.headers, { question: 'Revenue by category?', chatId: 'chat-1' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.chatId).toBe('chat-1');
    expect(body.answer).toBe('Here is what I found.');
    expect(body.query).toEqual({ measures: ['orders.revenue'], dimensions: ['products.category'], order: { 'orders.revenue': 'desc' } });
    const byId = new Map(products.map((p) => [p.id, p.category]));
    const books = orders.filter((o) => byId.get(o.product_id) === 'Books').reduce((sum, o) => sum + o.amount, 0);
    expect(body.rows.find((r: unknown[]) => r[0] === 'Books')[1]).toBeCloseTo(books, 2);
    // What svc sent: the model, the key, one forced tool with the query schema, the semantic model; no rows.
    const sent = fake.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-test-secret');
    expect(sent.body.model).toBe('svc-test-model');
    expect(sent.body.tool_choice).toEqual({ type: 'function', function: { name: 'run_semantic_query' } });
    expect(JSON.stringify(sent.body.tools)).toContain('"timeDimensions"');
    expect(sent.body.messages[0]!.content).toContain('measure orders.revenue: sum');
    expect(sent.body.messages[1]).toEqual({ role: 'user', content: 'Revenue by category?' });
    expect(JSON.stringify(sent.body)).not.toContain(String(Math.round(books)));
  });

  it('gives a new chatId when none is sent, and asks about a dashboard by publicId', async () => {
    const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
    const res = await ask(app, viewer.headers, { question: 'orders by month', publicId });
    expect(res.statusCode).toBe(200);
    expect(res.json().chatId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.json().rows).toHaveLength(12);
    // An API key asks about a dashboard of its account; without one it is a 400 naming publicId.
    expect((await ask(app, bearer(s.keys.admin!), { question: 'how many orders', publicId })).statusCode).toBe(200);
    const missing = await ask(app, bearer(s.keys.admin!), { question: 'how many orders' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error.field).toBe('publicId');
  });

  it("refuses a model's query that names an undeclared member (422), and an upstream failure is a 502", async () => {
    const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
    const profit = await ask(app, viewer.headers, { question: 'what is the profit' });
    expect(profit.statusCode).toBe(422);
    expect(profit.json().error.field).toBe('toolCall.measures[0]');
    fake.respond = () => ({ status: 500, body: { error: 'boom' } });
    try {
      const failed = await ask(app, viewer.headers, { question: 'anything' });
      expect(failed.statusCode).toBe(502);
      expect(failed.json().error.code).toBe('bad_gateway');
      expect(failed.json().error.message).not.toContain('sk-test-secret');
      fake.respond = () => ({ status: 200, body: { choices: [{ message: { content: 'no tool for you' } }] } });
      expect((await ask(app, viewer.headers, { question: 'anything' })).statusCode).toBe(502);
      fake.respond = () => ({ status: 200, body: toolCallReply({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ["x' OR 1=1 --"] }] }) });
      const injected = await ask(app, viewer.headers, { question: 'anything' });
      expect(injected.statusCode).toBe(200);
      expect(injected.json().rows).toEqual([[0]]);
    } finally {
      delete fake.respond;
    }
  });

  it('says plainly when AI is not set up (503), and honours a session minted with allowAi false (403)', async () => {
    const viewer = await mintViewer(unconfigured, s.keys.admin!, { deploymentId: s.refs.prod! });
    const res = await ask(unconfigured, viewer.headers, { question: 'how many orders' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toMatch(/SVC_AI_BASE_URL/);
    const denied = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, settings: { allowAi: false } });
    expect((await ask(app, denied.headers, { question: 'how many orders' })).statusCode).toBe(403);
  });

  it('refuses bad input and foreign dashboards', async () => {
    const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
    expect((await ask(app, {}, { question: 'x' })).statusCode).toBe(401);
    const empty = await ask(app, viewer.headers, { question: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.field).toBe('question');
    expect((await ask(app, viewer.headers, { question: 'x'.repeat(2001) })).statusCode).toBe(400);
    expect((await ask(app, viewer.headers, { question: 'x', publicId: 'no-such-dashboard' })).statusCode).toBe(404);
    const elsewhere = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.other! });
    expect((await ask(app, elsewhere.headers, { question: 'x', publicId })).statusCode).toBe(403);
  });
});
