import type { DataSourceConfig } from '../semantic/semantic.model.js';
import type { Warehouse } from './warehouse.js';
import { DuckDbWarehouse } from './warehouse.duckdb.js';
import { PostgresWarehouse } from './warehouse.postgres.js';
import { SqliteWarehouse } from './warehouse.sqlite.js';

export interface WarehouseSettings {
  timeoutMs: number;
  /** The demo warehouse's file, for `{ "type": "demo" }` data sources. */
  demoPath(): string;
}

/** Opens the warehouse of a data source. */
export function openWarehouse(source: DataSourceConfig, settings: WarehouseSettings): Warehouse {
  switch (source.type) {
    case 'postgres':
      return new PostgresWarehouse(source.url, source.schema, settings.timeoutMs, 4);
    case 'duckdb':
      return new DuckDbWarehouse(source, 2);
    case 'sqlite':
      return new SqliteWarehouse(source.path, 2);
    case 'demo':
      return new SqliteWarehouse(settings.demoPath(), 2);
  }
}

/** Open warehouses, one per distinct data source, shared by every request; closed with the app. */
export class WarehouseRegistry {
  private readonly open = new Map<string, Warehouse>();

  constructor(private readonly settings: WarehouseSettings) {}

  get(source: DataSourceConfig): Warehouse {
    const key = JSON.stringify(source);
    let warehouse = this.open.get(key);
    if (warehouse === undefined) {
      warehouse = openWarehouse(source, this.settings);
      this.open.set(key, warehouse);
    }
    return warehouse;
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((warehouse) => warehouse.close()));
    this.open.clear();
  }
}
