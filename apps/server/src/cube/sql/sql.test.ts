import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { testConfig } from '../../../test/config.js';
import { mintViewer } from '../../../test/embed.js';
import { seedAccount } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { demoRows } from '../../../test/warehouse.js';
import { buildApp } from '../../app.js';
import type { SemanticView } from '../../data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../../data/warehouse/warehouse.demo.js';

const run = promisify(execFile);

/**
 * Issue 36 part 3, the SQL API over the Postgres wire protocol (docs/cube-sql.md), driven by real clients against
 * svc listening on ephemeral ports in this process: Debian's psql (simple protocol, its `\d` catalog queries),
 * node-postgres (the extended protocol with parameters), the answers equal to Cube REST `load`'s for each tenant,
 * isolation across accounts and tenants, refusals as SQL errors, and malformed input that leaves the server answering.
 * libpg-query is a WASM build: every statement here goes through it on this Node (20: it warns of no engine).
 */
describeEachDialect('the SQL API (Postgres wire protocol)', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let port: number;

  beforeAll(async () => {
    const views: SemanticView[] = structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name !== 'orders' ? view : {
      ...view, preAggregations: undefined,
      accessPolicy: [
        { group: '*', memberLevel: { includes: '*', excludes: ['average_order_value'] }, rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
        { group: 'Analysts', rowLevel: { allowAll: true } },
      ],
    }));
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      groups: [{ ref: 'analysts', name: 'Analysts', members: ['alice'] }],
      deployments: [{ ref: 'prod', name: 'Prod', semanticViews: views }],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'carol', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Theirs', semanticViews: [DEMO_SEMANTIC_VIEWS.find((v) => v.name === 'products')!] }],
    });
    app = await buildApp(testConfig({
      sql: { port: 0, host: '127.0.0.1', tlsCert: undefined, tlsKey: undefined, maxConnectionsPerAccount: 4, statementTimeoutMs: 20_000, rowCap: 1000 },
    }), { db: t().db });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = app.sqlServer!.port;
  });

  afterAll(async () => {
    await app.close();
  });

  const viewer = async (tenant: string) => (await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: tenant, securityContext: { tenant } })).token;
  const client = async (password: string, options: Partial<pg.ClientConfig> = {}) => {
    const c = new pg.Client({ host: '127.0.0.1', port, user: 'analyst', database: 'svc', password, ...options });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };
  const psql = async (password: string, commands: string[]) => {
    const args = ['-X', '-A', '-F', '|', '-h', '127.0.0.1', '-p', String(port), '-U', 'analyst', '-d', 'svc', '-v', 'ON_ERROR_STOP=1', ...commands.flatMap((c) => ['-c', c])];
    const { stdout } = await run('/usr/bin/psql', args, { env: { ...process.env, PGPASSWORD: password, PGSSLMODE: 'disable', PGCONNECT_TIMEOUT: '10' }, timeout: 30_000 });
    return stdout;
  };
  const restLoad = async (token: string, query: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: '/cubejs-api/v1/load', headers: { authorization: token }, payload: { query } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: Array<Record<string, string | null>> }>().data;
  };

  it('psql runs \\d, \\d orders, a SELECT ... GROUP BY and a MEASURE() with an embed token as its password', async () => {
    const token = await viewer('customer-a');
    const out = await psql(token, ['\\d', '\\d orders', '\\d+ orders',
      'SELECT status, MEASURE(count) AS orders, SUM(revenue) FROM orders GROUP BY status ORDER BY status',
      "SELECT DATE_TRUNC('month', created_at) AS month, MEASURE(count) FROM orders WHERE created_at BETWEEN '2024-01-01' AND '2024-03-31' GROUP BY 1 ORDER BY 1"]);
    const [list, table] = [out.slice(0, out.indexOf('Table')), out.slice(out.indexOf('Table'))];
    expect(list).toContain('public|orders|table|analyst');
    expect(list).toContain('public|customers|table|analyst');
    expect(table).toContain('Table "public.orders"');
    expect(table).toMatch(/\nstatus\|text\|/);
    expect(table).toMatch(/\ncount\|numeric\|/);
    expect(table).toMatch(/\ncreated_at\|timestamp without time zone\|/);
    // \d+ shows each member's title as the column's description (col_description).
    expect(out).toMatch(/\nrevenue\|numeric\|[^\n]*\|Revenue\n/);
    // The policy hides average_order_value from viewers: not a column of their table.
    expect(table).not.toContain('average_order_value');
    const mine = demoRows().ordersOf('customer-a');
    const statuses = [...new Set(mine.map((o) => o.status))].sort();
    expect(out).toContain('status|orders|sum');
    for (const status of statuses) expect(out).toContain(`\n${status}|${mine.filter((o) => o.status === status).length}|`);
    expect(out).toMatch(/month\|measure\n2024-01-01 00:00:00\|\d+\n2024-02-01 00:00:00\|\d+\n2024-03-01 00:00:00\|\d+\n\(3 rows\)/);
  });

  it('node-postgres runs parameterised queries through the extended protocol, equal to Cube REST load for each tenant', async () => {
    const seen = new Map<string, number>();
    for (const tenant of ['customer-a', 'customer-b']) {
      const token = await viewer(tenant);
      const c = await client(token);
      try {
        const sql = await c.query('SELECT status, MEASURE(count) AS n, MEASURE(revenue) AS revenue FROM orders WHERE status IN ($1, $2) AND amount >= $3 GROUP BY 1 ORDER BY 1', ['completed', 'returned', 0]);
        const rest = await restLoad(token, {
          measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'], order: [['orders.status', 'asc']],
          filters: [{ member: 'orders.status', operator: 'equals', values: ['completed', 'returned'] }, { member: 'orders.amount', operator: 'gte', values: [0] }],
        });
        expect(sql.rows.length).toBeGreaterThan(0);
        expect(sql.rows).toEqual(rest.map((row) => ({ status: row['orders.status'], n: row['orders.count'], revenue: row['orders.revenue'] })));
        seen.set(tenant, sql.rows.reduce((sum, row) => sum + Number(row.n), 0));
        const ofTenant = demoRows().ordersOf(tenant).filter((o) => o.status === 'completed' || o.status === 'returned').length;
        expect(seen.get(tenant)).toBe(ofTenant);
        // A prepared statement run twice with other values, and a time filter with a parameter.
        const named = { name: 'by-status', text: 'SELECT MEASURE(count) FROM orders WHERE status = $1', values: ['completed'] };
        const once = await c.query(named);
        const again = await c.query({ ...named, values: ['returned'] });
        expect(Number(once.rows[0].measure) + Number(again.rows[0].measure)).toBe(ofTenant);
        const byMonth = await c.query("SELECT DATE_TRUNC('month', created_at) AS m, COUNT(*) FROM orders WHERE created_at >= $1 GROUP BY 1 ORDER BY 1 LIMIT 2", ['2024-01-01']);
        expect(byMonth.rows.length).toBeLessThanOrEqual(2);
        expect(byMonth.fields.map((f) => f.name)).toEqual(['m', 'count']);
      } finally {
        await c.end();
      }
    }
    // Disjoint tenants: the two viewers' counts add up to both tenants' rows, each its own.
    expect(seen.get('customer-a')).not.toBe(undefined);
  });

  it('answers the catalog and session statements BI tools send: information_schema, SHOW, SET, version(), SELECT 1', async () => {
    const c = await client(await viewer('customer-a'));
    try {
      expect((await c.query('SELECT 1')).rows).toEqual([{ '?column?': 1 }]);
      expect((await c.query('SELECT version()')).rows[0].version).toContain('svc');
      expect((await c.query('SHOW server_version')).rows).toEqual([{ server_version: '15.0' }]);
      expect((await c.query("SET application_name = 'bi'")).command).toBe('SET');
      const tables = await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name");
      expect(tables.rows.map((r) => r.table_name)).toEqual(DEMO_SEMANTIC_VIEWS.map((v) => v.name).sort());
      const columns = await c.query('SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', ['orders']);
      expect(columns.rows).toContainEqual({ column_name: 'revenue', data_type: 'numeric' });
      expect(columns.rows.map((r) => r.column_name)).not.toContain('average_order_value');
    } finally {
      await c.end();
    }
  });

  it('refuses what it cannot serve as an SQL error (0A000, 42601, 42P01...) and the connection stays usable', async () => {
    const c = await client(s.keys.alice!);
    try {
      const refused = async (sql: string) => {
        const error = await c.query(sql).then(() => undefined, (e: unknown) => e as { code: string; message: string });
        expect(error, sql).toBeDefined();
        return error!.code;
      };
      expect(await refused('SELEC 1')).toBe('42601');
      expect(await refused('SELECT * FROM orders')).toBe('0A000');
      expect(await refused('SELECT o.status FROM orders o JOIN customers c ON true')).toBe('0A000');
      expect(await refused("SELECT status FROM orders WHERE status ~ 'x'")).toBe('0A000');
      expect(await refused('SELECT status, MEASURE(count) FROM orders')).toBe('42803');
      expect(await refused('SELECT AVG(revenue) FROM orders')).toBe('42803');
      expect(await refused('SELECT x FROM nowhere')).toBe('42P01');
      expect(await refused('INSERT INTO orders VALUES (1)')).toBe('25006');
      expect(await refused('SHOW no_such_setting')).toBe('42704');
      expect((await c.query('SELECT MEASURE(count) FROM orders')).rows[0].measure).toBe(String(demoRows().orders.length));
    } finally {
      await c.end();
    }
  });

  it('a wrong password is 28P01; too many connections for an account is 53300', async () => {
    const wrong = await client('svc_not-a-key').then(() => undefined, (e: unknown) => e as { code: string });
    expect(wrong?.code).toBe('28P01');
    const held = await Promise.all([1, 2, 3, 4].map(() => client(s.keys.bob!)));
    try {
      const fifth = await client(s.keys.bob!).then(() => undefined, (e: unknown) => e as { code: string });
      expect(fifth?.code).toBe('53300');
      // Another account is counted apart.
      const theirs = await client(other.keys.carol!);
      await theirs.end();
    } finally {
      await Promise.all(held.map((c) => c.end()));
    }
  });

  it('isolation: an account sees only its own deployment\'s views, a tenant only its own rows', async () => {
    const theirs = await client(other.keys.carol!);
    try {
      const tables = await theirs.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
      expect(tables.rows.map((r) => r.table_name)).toEqual(['products']);
      const error = await theirs.query('SELECT MEASURE(count) FROM orders').then(() => undefined, (e: unknown) => e as { code: string });
      expect(error?.code).toBe('42P01');
      // Another account's deployment named as the database: not found, the connection refused.
      const foreign = await client(other.keys.carol!, { database: String(s.refs.prod) }).then(() => undefined, (e: unknown) => e as { code: string });
      expect(foreign?.code).toBe('3D000');
    } finally {
      await theirs.end();
    }
    for (const tenant of ['customer-a', 'customer-b']) {
      const c = await client(await viewer(tenant));
      try {
        const tenants = await c.query('SELECT tenant, MEASURE(count) AS count FROM orders GROUP BY tenant');
        expect(tenants.rows).toEqual([{ tenant, count: String(demoRows().ordersOf(tenant).length) }]);
      } finally {
        await c.end();
      }
    }
  });

  it('speaks TLS when a certificate is configured (psql sslmode=require, node-postgres ssl), and stops a statement at the statement timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-sql-tls-'));
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
    const tlsApp = await buildApp(testConfig({
      sql: { port: 0, host: '127.0.0.1', tlsCert: cert, tlsKey: key, maxConnectionsPerAccount: 4, statementTimeoutMs: 1, rowCap: 1000 },
    }), { db: t().db });
    try {
      await tlsApp.ready();
      const tlsPort = tlsApp.sqlServer!.port;
      const token = await viewer('customer-b');
      const { stdout } = await run('/usr/bin/psql', ['-X', '-A', '-t', '-h', '127.0.0.1', '-p', String(tlsPort), '-U', 'customer-b', '-d', 'svc', '-c', 'SELECT 1'],
        { env: { ...process.env, PGPASSWORD: token, PGSSLMODE: 'require' }, timeout: 30_000 });
      expect(stdout.trim()).toBe('1');
      const c = new pg.Client({ host: '127.0.0.1', port: tlsPort, user: 'customer-b', database: 'svc', password: token, ssl: { rejectUnauthorized: false } });
      await c.connect();
      try {
        expect((await c.query('SELECT 1')).rows).toEqual([{ '?column?': 1 }]);
        // A 1 ms statement timeout: a query the cache has not seen is stopped with 57014, and the connection goes on.
        const timedOut = await c.query("SELECT MEASURE(count) FROM orders WHERE status = 'timeout-probe'").then(() => undefined, (e: unknown) => e as { code: string });
        expect(timedOut?.code).toBe('57014');
        expect((await c.query('SELECT 2')).rows).toEqual([{ '?column?': 2 }]);
      } finally {
        await c.end();
      }
    } finally {
      await tlsApp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('describes a prepared statement before Bind (Parse, Describe S, Sync): its parameters and its columns', async () => {
    const { serialize } = await import('pg-protocol');
    const c = await client(await viewer('customer-a'));
    try {
      // node-postgres's own connection writes the raw messages; what comes back is read off its socket.
      const stream = (c as unknown as { connection: { stream: Socket } }).connection.stream;
      const received: Buffer[] = [];
      const listener = (chunk: Buffer) => received.push(chunk);
      stream.prependListener('data', listener);
      stream.write(Buffer.concat([
        serialize.parse({ name: 'd1', text: 'SELECT status, MEASURE(count) AS n FROM orders WHERE status = $1 GROUP BY 1', types: [] }),
        serialize.describe({ type: 'S', name: 'd1' }),
        serialize.sync(),
      ]));
      await new Promise((resolve) => setTimeout(resolve, 300));
      stream.off('data', listener);
      const bytes = Buffer.concat(received);
      const types: string[] = [];
      for (let at = 0; at + 5 <= bytes.length; at += 1 + bytes.readInt32BE(at + 1)) types.push(String.fromCharCode(bytes[at]!));
      expect(types).toEqual(['1', 't', 'T', 'Z']);
      const description = bytes.subarray(bytes.indexOf('T', 0, 'latin1'));
      expect(description.includes(Buffer.from('status\0'))).toBe(true);
      expect(description.includes(Buffer.from('n\0'))).toBe(true);
    } finally {
      await c.end().catch(() => undefined);
    }
  });

  it('200 malformed statements and protocol messages leave the server answering SELECT 1', async () => {
    const token = await viewer('customer-a');
    const keep = await client(token);
    const statements = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.constantFrom('SELECT', 'SELECT FROM orders', "SELECT DATE_TRUNC('eon', created_at) FROM orders", 'SELECT MEASURE(status) FROM orders', 'SELECT 1/0 FROM orders', '\u0000', 'SELECT $1', ';;;'),
      fc.array(fc.constantFrom('SELECT', 'status', 'MEASURE(', ')', 'FROM', 'orders', 'WHERE', '=', "'x'", 'GROUP BY', '1', 'ORDER', 'LIMIT', ',', '(', 'pg_class', 'IN', 'BETWEEN', 'AND', 'OR', 'LIKE', '$1'), { maxLength: 14 }).map((w) => w.join(' ')),
    );
    await fc.assert(fc.asyncProperty(statements, async (sql) => {
      await keep.query(sql).catch(() => undefined);
      expect((await keep.query('SELECT 1')).rows).toEqual([{ '?column?': 1 }]);
    }), { numRuns: 150, seed: 36 });

    // Raw protocol: random bytes after a proper startup and password, or truncated messages. The server may close
    // that connection (a protocol violation is FATAL in Postgres too); a new connection still answers.
    const rawSession = async (after: Uint8Array) => new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const startup = Buffer.concat([Buffer.alloc(4), Buffer.from([0, 3, 0, 0]), Buffer.from('user\0analyst\0database\0svc\0\0')]);
      startup.writeInt32BE(startup.length, 0);
      const password = Buffer.concat([Buffer.from('p'), Buffer.alloc(4), Buffer.from(`${token}\0`)]);
      password.writeInt32BE(password.length - 1, 1);
      let sent = false;
      socket.on('data', (data) => {
        if (!sent && data.includes(Buffer.from('Z\0\0\0\u0005I'))) {
          sent = true;
          socket.write(after);
          setTimeout(() => socket.destroy(), 20);
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
      socket.write(startup);
      setTimeout(() => socket.write(password), 5);
      setTimeout(() => socket.destroy(), 2000);
    });
    const frames = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      fc.tuple(fc.constantFrom(...'QPBDECSHXdfF'.split('')), fc.integer({ min: -5, max: 40 }), fc.uint8Array({ maxLength: 30 }))
        .map(([type, length, body]) => { const head = Buffer.alloc(5); head.write(type); head.writeInt32BE(length, 1); return new Uint8Array(Buffer.concat([head, body])); }),
    );
    await fc.assert(fc.asyncProperty(frames, async (bytes) => {
      await rawSession(bytes);
      const fresh = await client(token);
      try {
        expect((await fresh.query('SELECT 1')).rows).toEqual([{ '?column?': 1 }]);
      } finally {
        await fresh.end();
      }
    }), { numRuns: 50, seed: 36 });
    await keep.end();
  }, 180_000);
});
