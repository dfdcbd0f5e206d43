import pg from 'pg';
import { AppError } from '../../core/core.errors.js';
import type { QueryRows, RunOptions, Warehouse } from './warehouse.js';

/** PostgreSQL's 64-bit integers and numerics as JavaScript numbers (aggregates; exact below 2^53). */
const numericTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    // Times as ISO 8601 instants, the same text on both dialects.
    if (oid === 1184 || oid === 1114) return (value: string) => new Date(value.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00') + (oid === 1114 ? 'Z' : '')).toISOString();
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export class PostgresWarehouse implements Warehouse {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;

  constructor(url: string, schema: string | undefined, timeoutMs: number, size: number) {
    const settings = ['-c default_transaction_read_only=on', `-c statement_timeout=${Math.round(timeoutMs)}`, '-c TimeZone=UTC'];
    if (schema !== undefined) settings.push(`-c search_path=${schema}`);
    this.pool = new pg.Pool({ connectionString: url, max: size, options: settings.join(' '), types: numericTypes, connectionTimeoutMillis: 5_000 });
    this.pool.on('error', () => undefined);
  }

  async run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      // Every statement runs in a read-only transaction (whatever a session setting says), and through the
      // extended protocol, which runs exactly one statement: nothing can be appended after a `;`.
      await client.query('BEGIN READ ONLY');
      const result = await client.query({ text: sql, values: parameters as unknown[], rowMode: 'array', queryMode: 'extended' } as pg.QueryConfig);
      await client.query('COMMIT');
      return { fields: result.fields.map((field) => field.name), rows: (result.rows as unknown[][]).slice(0, options.maxRows + 1) };
    } catch (error) {
      await client?.query('ROLLBACK').catch(() => undefined);
      const code = (error as { code?: string }).code;
      const message = error instanceof Error ? error.message : String(error);
      if (code === '57014') throw new AppError('query_timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`);
      if (code === undefined || code.startsWith('08') || code === '57P03') throw new AppError('service_unavailable', `the data source is unreachable: ${message}`);
      throw new AppError('invalid_query', `the data source refused the query: ${message}`);
    } finally {
      client?.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
