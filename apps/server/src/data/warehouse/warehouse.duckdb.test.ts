import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { mintViewer } from '../../../test/embed.js';
import { seedAccount, uniqueSuffix } from '../../../test/factory.js';
import { buildApp } from '../../app.js';
import { AppError } from '../../core/core.errors.js';
import { DuckDbWarehouse, duckDbReaderOf, duckDbSourceProblem } from './warehouse.duckdb.js';
import type { DuckDbSource } from './warehouse.duckdb.js';
import type { DataSourceConfig } from '../semantic/semantic.model.js';
import type { QueryRows } from './warehouse.js';
import { testConfig } from '../../../test/config.js';

/**
 * Issue 21: the DuckDB warehouse on its own, over small files written here by a writable DuckDB: what its rows look
 * like, what it reads (the database file, the named Parquet and CSV files, nothing else), that only a SELECT runs,
 * that a statement past its time is interrupted, and how it opens and closes; then a deployment with a DuckDB data
 * source over HTTP. The semantic queries' answers are compared with the other dialects' in compiler.dialects.test.ts
 * and compiler.query.test.ts.
 */

let dir: string;
let database: string;
const file = (...parts: string[]) => join(dir, ...parts);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-duckdb-'));
  database = file('fixtures.duckdb');
  mkdirSync(file('files', 'parts'), { recursive: true });
  writeFileSync(file('files', 'secret.csv'), 'secret\nnot for svc\n');
  writeFileSync(file('beside.csv'), 'secret\nnot for svc either\n');
  const instance = await DuckDBInstance.create(database);
  const connection = await instance.connect();
  await connection.run(`
    CREATE TABLE typed AS SELECT
      42::BIGINT AS big, 12345678901234::HUGEINT AS huge, 1234.5::DECIMAL(10,2) AS money, 7::INTEGER AS small, 0.25::DOUBLE AS ratio,
      TIMESTAMP '2024-01-05 10:00:00' AS ts, TIMESTAMPTZ '2024-01-05 12:00:00+02' AS tstz, TIMESTAMP 'infinity' AS forever,
      DATE '2024-01-05' AS day, TIME '10:11:12' AS clock, 'ab'::BLOB AS bytes, true AS flag, NULL::VARCHAR AS nothing,
      [1, 2]::BIGINT[] AS list, {'a': 1::HUGEINT, 'b': 'x'} AS struct, 'héllo' AS text;
    CREATE SCHEMA analytics;
    CREATE TABLE analytics.things AS SELECT range AS id FROM range(3);
    CREATE TABLE clash AS SELECT 1 AS id;
    COPY (SELECT range AS id, 'e' || range AS name FROM range(10)) TO '${file('files', 'events.parquet')}' (FORMAT parquet);
    COPY (SELECT range AS id, 'p' || range AS name FROM range(4)) TO '${file('files', 'people.csv')}' (FORMAT csv, HEADER);
    COPY (SELECT range AS id FROM range(5)) TO '${file('files', 'parts', 'a.parquet')}' (FORMAT parquet);
    COPY (SELECT range + 5 AS id FROM range(7)) TO '${file('files', 'parts', 'b.parquet')}' (FORMAT parquet);
  `);
  connection.closeSync();
  instance.closeSync();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const run = (warehouse: DuckDbWarehouse, sql: string, parameters: unknown[] = [], maxRows = 1000, timeoutMs = 10_000): Promise<QueryRows> =>
  warehouse.run(sql, parameters, { maxRows, timeoutMs });

/** The AppError a promise is rejected with (and fails the test if it resolves, or rejects with anything else). */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => new Error('it answered'), (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** A warehouse for one test, closed after it. */
function useWarehouse(source: () => Omit<DuckDbSource, 'type'>): () => DuckDbWarehouse {
  let warehouse: DuckDbWarehouse | undefined;
  beforeAll(() => {
    warehouse = new DuckDbWarehouse({ type: 'duckdb', ...source() }, 2);
  });
  afterAll(async () => warehouse?.close());
  return () => warehouse!;
}

describe('a DuckDB data source: a database file and Parquet and CSV files', () => {
  const warehouse = useWarehouse(() => ({
    path: database,
    files: { events: file('files', 'events.parquet'), people: file('files', 'people.csv'), parts: file('files', 'parts', '*.parquet') },
  }));

  it('returns plain values as the other warehouses do: integers and decimals as numbers, instants as ISO text, dates as text', async () => {
    const { fields, rows } = await run(warehouse(), 'SELECT * FROM typed');
    expect(fields).toEqual(['big', 'huge', 'money', 'small', 'ratio', 'ts', 'tstz', 'forever', 'day', 'clock', 'bytes', 'flag', 'nothing', 'list', 'struct', 'text']);
    expect(rows).toEqual([[
      42, 12345678901234, 1234.5, 7, 0.25, '2024-01-05T10:00:00.000Z', '2024-01-05T10:00:00.000Z', 'infinity', '2024-01-05', '10:11:12',
      Buffer.from('ab').toString('base64'), true, null, [1, 2], { a: 1, b: 'x' }, 'héllo',
    ]]);
    // Aggregates: count is a BIGINT, sum of integers a HUGEINT, avg a DOUBLE; all plain numbers.
    expect((await run(warehouse(), 'SELECT count(*), sum(id), avg(id) FROM parts')).rows).toEqual([[12, 66, 5.5]]);
  });

  it("finds the database's tables by bare, schema-qualified and catalog-qualified name, and each file's table", async () => {
    expect((await run(warehouse(), 'SELECT count(*) FROM analytics.things')).rows).toEqual([[3]]);
    expect((await run(warehouse(), 'SELECT count(*) FROM warehouse.main.typed')).rows).toEqual([[1]]);
    expect((await run(warehouse(), 'SELECT count(*) FROM typed')).rows).toEqual([[1]]);
    expect((await run(warehouse(), 'SELECT max(name) FROM events')).rows).toEqual([['e9']]);
    expect((await run(warehouse(), 'SELECT name FROM people ORDER BY id')).rows).toEqual([['p0'], ['p1'], ['p2'], ['p3']]);
    expect((await run(warehouse(), 'SELECT min(id), max(id) FROM parts')).rows).toEqual([[0, 11]]);
  });

  it('binds parameters positionally, as $1 (the compiler) or ? (raw SQL snapshots)', async () => {
    expect((await run(warehouse(), 'SELECT $1 || $3, $2 + 1, $4 IS NULL', ['a', 41, 'b', null])).rows).toEqual([['ab', 42, true]]);
    expect((await run(warehouse(), 'SELECT * FROM (SELECT name FROM events WHERE id >= ? AND name <> ?) AS q LIMIT ?', [7, 'e8', 10])).rows).toEqual([['e7'], ['e9']]);
    // An integer JavaScript holds only approximately (past 2^53) is bound as the double it is.
    expect((await run(warehouse(), 'SELECT $1 = power(2, 60), typeof($1)', [2 ** 60])).rows).toEqual([[true, 'DOUBLE']]);
    // A value is only ever a value.
    expect((await run(warehouse(), 'SELECT count(*) FROM events WHERE name = $1', ["e1' OR '1'='1"])).rows).toEqual([[0]]);
  });

  it('reads at most maxRows + 1 rows', async () => {
    const { rows } = await run(warehouse(), 'SELECT range FROM range(100000)', [], 10);
    expect(rows).toHaveLength(11);
    expect(rows[10]).toEqual([10]);
  });

  it('runs only a SELECT: a write, a setting, an attachment, an extension or a second statement is a 422, and changes nothing', async () => {
    const out = file('files', 'parts', 'out.parquet');
    const refused = [
      'CREATE TABLE written AS SELECT 1 AS id',
      'CREATE VIEW memory.main.written AS SELECT 1 AS id',
      'INSERT INTO typed (big) VALUES (1)',
      `COPY (SELECT 1 AS id) TO '${out}' (FORMAT parquet)`,
      'SET enable_external_access = true',
      'RESET lock_configuration',
      "SET search_path = 'memory.main'",
      `ATTACH '${file('other.duckdb')}' AS other`,
      'DETACH warehouse',
      'INSTALL httpfs',
      'LOAD httpfs',
      "PRAGMA enable_profiling = 'json'",
      'EXPLAIN SELECT 1',
      'CALL duckdb_settings()',
      'SELECT 1; DROP TABLE typed',
    ];
    for (const sql of refused) {
      const error = await refusal(run(warehouse(), sql));
      expect(error.code, sql).toBe('invalid_query');
      expect(error.status, sql).toBe(422);
    }
    expect((await run(warehouse(), "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'written'")).rows).toEqual([[0]]);
    expect((await run(warehouse(), "SELECT count(*) FROM duckdb_views() WHERE view_name = 'written'")).rows).toEqual([[0]]);
    expect((await run(warehouse(), "SELECT count(*) FROM duckdb_databases() WHERE database_name = 'other'")).rows).toEqual([[0]]);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(file('other.duckdb'))).toBe(false);
    expect((await run(warehouse(), "SELECT current_setting('enable_external_access'), current_setting('lock_configuration'), current_setting('autoload_known_extensions')")).rows)
      .toEqual([[false, true, false]]);
    expect((await run(warehouse(), 'SELECT count(*) FROM typed')).rows).toEqual([[1]]);
  });

  it('reads no file but those it names: not /etc/passwd, not a file beside a named one or beside the database, not over HTTP', async () => {
    for (const sql of [
      "SELECT * FROM read_csv('/etc/passwd')",
      "SELECT * FROM read_text('/etc/hostname')",
      `SELECT * FROM read_csv('${file('files', 'secret.csv')}')`,
      `SELECT * FROM read_blob('${file('files', 'secret.csv')}')`,
      `SELECT * FROM read_parquet('${file('files', '*.parquet')}')`,
      `SELECT * FROM read_csv('${file('beside.csv')}')`,
      `SELECT * FROM read_blob('${file('*')}')`,
      "SELECT * FROM glob('/etc/*')",
      "SELECT * FROM read_csv('https://example.com/data.csv')",
    ]) {
      const error = await refusal(run(warehouse(), sql));
      expect(error.code, sql).toBe('invalid_query');
      expect(error.message, sql).toMatch(/Permission Error|disabled|not allowed/i);
    }
    // What it names stays readable, also through the reader functions.
    expect((await run(warehouse(), `SELECT count(*) FROM read_parquet('${file('files', 'events.parquet')}')`)).rows).toEqual([[10]]);
  });

  it('stops a statement past its time (504 query_timeout) and keeps serving on every connection', async () => {
    const started = Date.now();
    const error = await refusal(run(warehouse(), 'SELECT count(*) FROM range(1000000000) AS a, range(1000000) AS b WHERE a.range + b.range < 0', [], 10, 300));
    expect(error.code).toBe('query_timeout');
    expect(error.status).toBe(504);
    expect(Date.now() - started).toBeLessThan(5_000);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => run(warehouse(), 'SELECT $1 * 2', [i])));
    expect(answers.map((a) => a.rows[0]![0])).toEqual([0, 2, 4, 6, 8, 10]);
  });

  it('answers a query the data source refuses as 422 invalid_query, naming what DuckDB said', async () => {
    const error = await refusal(run(warehouse(), 'SELECT nope FROM typed'));
    expect(error.code).toBe('invalid_query');
    expect(error.message).toMatch(/nope/);
  });
});

describe('a DuckDB data source of files only', () => {
  const warehouse = useWarehouse(() => ({ files: { events: file('files', 'events.parquet') } }));

  it('reads its files, and no database file', async () => {
    expect((await run(warehouse(), 'SELECT count(*) FROM events')).rows).toEqual([[10]]);
    expect((await refusal(run(warehouse(), `SELECT * FROM read_blob('${database}')`))).code).toBe('invalid_query');
    expect((await refusal(run(warehouse(), `ATTACH '${database}' AS mine (READ_ONLY)`))).code).toBe('invalid_query');
    expect((await refusal(run(warehouse(), 'SELECT * FROM typed'))).code).toBe('invalid_query');
  });
});

describe('opening and closing a DuckDB data source', () => {
  it('resolves relative paths against the working directory, as a SQLite path is', async () => {
    const warehouse = new DuckDbWarehouse({ type: 'duckdb', path: relative(process.cwd(), database), files: { events: relative(process.cwd(), file('files', 'events.parquet')) } }, 1);
    try {
      expect((await run(warehouse, 'SELECT (SELECT count(*) FROM typed), (SELECT count(*) FROM events)')).rows).toEqual([[1, 10]]);
    } finally {
      await warehouse.close();
    }
  });

  it('answers 503 when it cannot be opened (a missing file, a glob of nothing, a table a file would hide), and tries again on the next query', async () => {
    const later = file('later.duckdb');
    const cases: Array<[Omit<DuckDbSource, 'type'>, RegExp]> = [
      [{ path: later }, /could not be opened/],
      [{ files: { events: file('files', 'nothing', '*.parquet') } }, /could not be opened/],
      [{ path: database, files: { clash: file('files', 'events.parquet') } }, /files\.clash: the database at path already has a table clash/],
    ];
    for (const [source, message] of cases) {
      const warehouse = new DuckDbWarehouse({ type: 'duckdb', ...source }, 1);
      try {
        const error = await refusal(run(warehouse, 'SELECT 1'));
        expect(error.code, JSON.stringify(source)).toBe('service_unavailable');
        expect(error.message).toMatch(message);
        if (source.path === later) {
          const instance = await DuckDBInstance.create(later);
          instance.closeSync();
          expect((await run(warehouse, 'SELECT 1')).rows).toEqual([[1]]);
        }
      } finally {
        await warehouse.close();
      }
    }
  });

  it('closes: a running statement is stopped, and a query after is refused (503)', async () => {
    const warehouse = new DuckDbWarehouse({ type: 'duckdb', path: database }, 2);
    expect((await run(warehouse, 'SELECT 1')).rows).toEqual([[1]]);
    const slow = run(warehouse, 'SELECT count(*) FROM range(1000000000) AS a, range(1000000) AS b WHERE a.range + b.range < 0', [], 10, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await warehouse.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await refusal(slow)).code).toBe('service_unavailable');
    expect((await refusal(run(warehouse, 'SELECT 1'))).code).toBe('service_unavailable');
  });
});

describe('DuckDB data source configuration', () => {
  it('reads .parquet and .csv files and globs of them, whatever the case of the extension, and nothing else', () => {
    expect(duckDbReaderOf('/srv/events/*.parquet')).toBe('read_parquet');
    expect(duckDbReaderOf('exports/customers.CSV')).toBe('read_csv');
    expect(duckDbReaderOf('/srv/data/**/part-?.csv')).toBe('read_csv');
    for (const other of ['events.json', 'events.csv.gz', 'events.parquet/', 'events', 'events.tsv']) expect(duckDbReaderOf(other), other).toBeUndefined();
  });

  it('names the first problem of a source below its dataSource', () => {
    expect(duckDbSourceProblem({ type: 'duckdb', path: 'w.duckdb', files: { orders: 'o.parquet', Events: 'e/*.csv' } })).toBeUndefined();
    expect(duckDbSourceProblem({ type: 'duckdb' })?.path).toBe('');
    expect(duckDbSourceProblem({ type: 'duckdb', files: {} })?.path).toBe('');
    expect(duckDbSourceProblem({ type: 'duckdb', files: { 'order-lines': 'o.parquet' } })).toEqual({ path: '.files.order-lines', message: expect.stringMatching(/is not a table name/) });
    expect(duckDbSourceProblem({ type: 'duckdb', files: { events: 'events.json' } })).toEqual({ path: '.files.events', message: '"events.json" is not a .parquet or .csv file, nor a glob of them' });
    expect(duckDbSourceProblem({ type: 'duckdb', files: { Orders: 'a.csv', orders: 'b.csv' } })).toEqual({ path: '.files.orders', message: expect.stringMatching(/also named Orders/) });
    // The locked warehouse allows a glob's whole directory: never the root's.
    expect(duckDbSourceProblem({ type: 'duckdb', files: { everything: '/**/*.csv' } })).toEqual({ path: '.files.everything', message: expect.stringMatching(/every file of the server/) });
    expect(duckDbSourceProblem({ type: 'duckdb', files: { data: '/data*/x.parquet' } })?.path).toBe('.files.data');
    expect(duckDbSourceProblem({ type: 'duckdb', files: { data: '/data/*/x.parquet' } })).toBeUndefined();
  });
});

const REPORTS = ['monthly', 'raw', 'passwd', 'create', 'setting', 'copy'];

/**
 * A dashboard of a semantic CHART, a FILTER, and raw SQL snapshots (one that reads, and ones that must be refused),
 * whose snapshots name the reports `r-<chart>-<deployment>`.
 */
function dashboard(publicId: string, deployment: string) {
  const charts = REPORTS;
  const report = (chart: string) => `r-${chart}-${deployment}`;
  return {
    publicId, status: 'published' as const, allowEmbed: true, title: 'DuckDB',
    config: {
      widgets: [
        ...charts.map((id, i) => ({ id, type: 'CHART' as const, position: { x: 0, y: i, w: 6, h: 1 } })),
        { id: 'category', type: 'FILTER' as const, position: { x: 6, y: 0, w: 3, h: 1 }, config: { member: 'products.category' } },
      ],
    },
    // Snapshots in the order of the CHART widgets (a CHART without reportId shows the snapshot of its place).
    reportSnapshots: [
      { report: report('monthly'), kind: 'table', meta: { query: { measures: ['orders.revenue', 'orders.count', 'orders.customers'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }] } } },
      { report: report('raw'), kind: 'table', sqlQuery: 'SELECT status, count(*) AS n, min(created_at) AS first FROM orders GROUP BY status ORDER BY status' },
      { report: report('passwd'), kind: 'table', sqlQuery: "SELECT * FROM read_csv('/etc/passwd')" },
      { report: report('create'), kind: 'table', sqlQuery: 'CREATE TABLE written AS SELECT 1 AS n' },
      { report: report('setting'), kind: 'table', sqlQuery: 'SET enable_external_access = true' },
      { report: report('copy'), kind: 'table', sqlQuery: "WITH x AS (SELECT 1) COPY (SELECT 1) TO '/tmp/svc-written.csv'" },
    ],
  };
}

describeEachDialect('widget data on a DuckDB data source', (t) => {
  const duckdb = inject('duckdbWarehouse');
  const sources: Record<'file' | 'files' | 'demo', DataSourceConfig | undefined> = {
    file: { type: 'duckdb', path: duckdb.path },
    files: { type: 'duckdb', files: duckdb.files },
    demo: undefined,
  };
  const publicIds: Record<string, string> = {};
  let viewers: Record<string, { authorization: string }> = {};

  beforeAll(async () => {
    const suffix = uniqueSuffix();
    const deployments = Object.entries(sources).map(([ref, dataSource]) => {
      publicIds[ref] = `duck-${ref}-${suffix}`;
      return {
        ref, name: ref, ...(dataSource !== undefined ? { dataSource } : {}),
        items: [
          { ref: `wb-${ref}`, type: 'WORKBOOK' as const, name: 'DuckDB', dashboard: dashboard(publicIds[ref]!, ref) },
          ...REPORTS.map((chart) => ({ ref: `r-${chart}-${ref}`, type: 'REPORT' as const, name: chart })),
        ],
      };
    });
    const s = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments });
    viewers = {};
    for (const ref of Object.keys(sources)) viewers[ref] = (await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs[ref]! })).headers;
  });

  const post = (ref: string, widget: string, payload: object = {}) =>
    t().app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicIds[ref]}/widgets/${widget}/data`, headers: viewers[ref]!, payload });

  it('answers a semantic widget from the DuckDB file and from its Parquet and CSV files as from the SQLite demo warehouse', async () => {
    const demo = await post('demo', 'monthly', { timezone: 'Europe/Berlin', filters: { 'products.category': ['Books', 'Toys'] } });
    expect(demo.statusCode).toBe(200);
    expect(demo.json().rows).toHaveLength(12);
    for (const ref of ['file', 'files']) {
      const res = await post(ref, 'monthly', { timezone: 'Europe/Berlin', filters: { 'products.category': ['Books', 'Toys'] } });
      expect(res.statusCode, ref).toBe(200);
      const body = res.json();
      expect(body.columns, ref).toEqual(demo.json().columns);
      expect(body.timezone).toBe('Europe/Berlin');
      const expected = demo.json().rows as Array<[string, number, number, number]>;
      (body.rows as Array<[string, number, number, number]>).forEach(([bucket, revenue, count, customers], i) => {
        expect(bucket, ref).toBe(expected[i]![0]);
        expect(revenue, ref).toBeCloseTo(expected[i]![1], 6);
        expect([count, customers], ref).toEqual([expected[i]![2], expected[i]![3]]);
      });
    }
  });

  it("lists a FILTER widget's values and runs a snapshot's raw SQL, with times as ISO instants", async () => {
    const demoRaw = (await post('demo', 'raw')).json();
    for (const ref of ['file', 'files']) {
      expect((await post(ref, 'category')).json().rows, ref).toEqual((await post('demo', 'category')).json().rows);
      const raw = await post(ref, 'raw');
      expect(raw.statusCode, ref).toBe(200);
      expect(raw.json().columns.map((c: { name: string }) => c.name)).toEqual(['status', 'n', 'first']);
      expect(raw.json().rows.map((r: unknown[]) => r.slice(0, 2)), ref).toEqual(demoRaw.rows.map((r: unknown[]) => r.slice(0, 2)));
      // SQLite keeps the text as written ("...Z"); DuckDB's TIMESTAMP (the file) and text (Parquet) both read as that instant.
      expect(raw.json().rows.map((r: unknown[]) => new Date(String(r[2])).toISOString()), ref).toEqual(demoRaw.rows.map((r: unknown[]) => new Date(String(r[2])).toISOString()));
    }
    expect(String((await post('file', 'raw')).json().rows[0][2])).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
  });

  it('refuses raw SQL that reads a file of the server, writes, or changes a setting: 422, never a 500', async () => {
    for (const ref of ['file', 'files']) {
      for (const widget of ['passwd', 'create', 'setting', 'copy']) {
        const res = await post(ref, widget);
        expect(res.statusCode, `${ref} ${widget}`).toBe(422);
        expect(res.json().error.code, `${ref} ${widget}`).toBe('invalid_query');
      }
      expect((await post(ref, 'passwd')).json().error.message).toMatch(/Permission Error/);
      expect(existsSync('/tmp/svc-written.csv')).toBe(false);
      expect((await post(ref, 'raw')).statusCode).toBe(200);
    }
  });

  it('stops a statement past its time (504), and keeps serving', async () => {
    const app = await buildApp(testConfig({ data: { timeoutMs: 1_000 } }), { db: t().db });
    try {
      const id = `duck-slow-${uniqueSuffix()}`;
      const s = await seedAccount(t().db.kysely, {
        users: [{ ref: 'admin', role: 'admin' }],
        deployments: [{
          ref: 'prod', name: 'P', dataSource: { type: 'duckdb', path: duckdb.path },
          items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Slow', dashboard: {
            publicId: id, status: 'published', allowEmbed: true,
            config: { widgets: [{ id: 'forever', type: 'CHART', position: { x: 0, y: 0, w: 1, h: 1 } }, { id: 'quick', type: 'CHART', position: { x: 1, y: 0, w: 1, h: 1 } }] },
            reportSnapshots: [
              { report: 'r1', sqlQuery: 'SELECT count(*) AS n FROM range(1000000000) AS a, range(1000000) AS b WHERE a.range + b.range < 0' },
              { report: 'r2', sqlQuery: 'SELECT count(*) AS n FROM orders' },
            ],
          } }, { ref: 'r1', type: 'REPORT', name: 'r1' }, { ref: 'r2', type: 'REPORT', name: 'r2' }],
        }],
      });
      const session = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
      const slow = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${id}/widgets/forever/data`, headers: session.headers, payload: {} });
      expect(slow.statusCode).toBe(504);
      expect(slow.json().error.code).toBe('query_timeout');
      const quick = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${id}/widgets/quick/data`, headers: session.headers, payload: {} });
      expect(quick.statusCode).toBe(200);
      expect(quick.json().rows[0][0]).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
