import type { WarehouseDialect } from '../semantic/semantic.model.js';

// The data source's side of the data path (issue 32's last step): what every driver does. One file per driver
// (warehouse.sqlite.ts, warehouse.postgres.ts, warehouse.duckdb.ts); warehouse.registry.ts opens them.

/** The rows of a query: column names, rows as arrays, at most `maxRows + 1` of them (one more tells truncation). */
export interface QueryRows {
  fields: string[];
  rows: unknown[][];
}

export interface RunOptions {
  /** Rows read at most (the compiled query has its own LIMIT; raw SQL is wrapped in one). */
  maxRows: number;
  timeoutMs: number;
}

/** A deployment's data source: read-only, every statement bounded in time and rows. */
export interface Warehouse {
  readonly dialect: WarehouseDialect;
  run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows>;
  close(): Promise<void>;
}
