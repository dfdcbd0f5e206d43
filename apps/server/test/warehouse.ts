import { afterAll, beforeAll, describe, inject } from 'vitest';
import type { WarehouseDialect } from '../src/data/semantic/semantic.model.js';
import { DEMO_ORDERS, demoCustomers, demoOrders, demoProducts } from '../src/data/warehouse/warehouse.demo.js';
import type { DemoCustomer, DemoOrder, DemoProduct } from '../src/data/warehouse/warehouse.demo.js';
import type { DataSourceConfig } from '../src/data/semantic/semantic.model.js';
import { openWarehouse } from '../src/data/warehouse/warehouse.registry.js';
import type { Warehouse } from '../src/data/warehouse/warehouse.js';
import { WAREHOUSE_SCHEMA } from './global-setup.js';

export interface WarehouseContext {
  dialect: WarehouseDialect;
  /** What the suite's title calls this source: its dialect, or for DuckDB which copy it reads. */
  label: string;
  source: DataSourceConfig;
  warehouse: Warehouse;
}

/**
 * The demo warehouse's data source on each dialect: the run's SQLite file, the test database's `demo_wh` schema, and
 * on DuckDB both its database file and its Parquet and CSV copies (test/duckdb-warehouse.ts).
 */
export function warehouseSources(): Array<{ dialect: WarehouseDialect; label: string; source: DataSourceConfig | null }> {
  const postgresUrl = inject('postgresUrl');
  const duckdb = inject('duckdbWarehouse');
  return [
    { dialect: 'sqlite', label: 'sqlite', source: { type: 'sqlite', path: inject('demoWarehousePath') } },
    { dialect: 'postgres', label: 'postgres', source: postgresUrl === null ? null : ({ type: 'postgres', url: postgresUrl, schema: WAREHOUSE_SCHEMA } as DataSourceConfig) },
    { dialect: 'duckdb', label: 'duckdb file', source: { type: 'duckdb', path: duckdb.path } },
    { dialect: 'duckdb', label: 'duckdb parquet and csv', source: { type: 'duckdb', files: duckdb.files } },
  ];
}

/** Runs a suite against the demo warehouse on SQLite, on PostgreSQL (visibly skipped without one) and on DuckDB. */
export function describeEachWarehouse(name: string, suite: (context: () => WarehouseContext) => void): void {
  for (const { dialect, label, source } of warehouseSources()) {
    const skip = source === null;
    (skip ? describe.skip : describe)(skip ? `${name} [${label}: SKIPPED, no SVC_TEST_POSTGRES_URL]` : `${name} [${label}]`, () => {
      let context: WarehouseContext | undefined;
      beforeAll(() => {
        context = { dialect, label, source: source!, warehouse: openWarehouse(source!, { timeoutMs: 30_000, demoPath: () => inject('demoWarehousePath') }) };
      });
      afterAll(async () => context?.warehouse.close());
      suite(() => context!);
    });
  }
}

/** The demo warehouse's rows, regenerated from the same seed: tests compute expected figures from them in JavaScript. */
export interface DemoRows {
  customers: DemoCustomer[];
  products: DemoProduct[];
  /** Every order, with its customer account in `tenant` (`customer-a` … `customer-j`). */
  orders: DemoOrder[];
  /** The orders of one customer account (`orders.tenant`), for figures under a row-level policy: `ordersOf('customer-b')`. */
  ordersOf(tenant: string): DemoOrder[];
}

let rows: DemoRows | undefined;
export function demoRows(): DemoRows {
  if (rows === undefined) {
    const customers = demoCustomers(DEMO_ORDERS);
    const products = demoProducts();
    const orders = [...demoOrders(DEMO_ORDERS, customers.length, products)];
    const byTenant = new Map<string, DemoOrder[]>();
    for (const order of orders) {
      const list = byTenant.get(order.tenant);
      if (list === undefined) byTenant.set(order.tenant, [order]);
      else list.push(order);
    }
    rows = { customers, products, orders, ordersOf: (tenant) => byTenant.get(tenant) ?? [] };
  }
  return rows;
}
