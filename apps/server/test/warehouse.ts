import { afterAll, beforeAll, describe, inject } from 'vitest';
import type { WarehouseDialect } from '../src/data/data.compiler.js';
import { DEMO_ORDERS, demoCustomers, demoOrders, demoProducts } from '../src/data/data.demo-warehouse.js';
import type { DemoCustomer, DemoOrder, DemoProduct } from '../src/data/data.demo-warehouse.js';
import type { DataSourceConfig } from '../src/data/data.model.js';
import { openWarehouse } from '../src/data/data.warehouse.js';
import type { Warehouse } from '../src/data/data.warehouse.js';
import { WAREHOUSE_SCHEMA } from './global-setup.js';

export interface WarehouseContext {
  dialect: WarehouseDialect;
  source: DataSourceConfig;
  warehouse: Warehouse;
}

/** The demo warehouse's data source on each dialect: the run's SQLite file, and the test database's `demo_wh` schema. */
export function warehouseSources(): Array<{ dialect: WarehouseDialect; source: DataSourceConfig | null }> {
  const postgresUrl = inject('postgresUrl');
  return [
    { dialect: 'sqlite', source: { type: 'sqlite', path: inject('demoWarehousePath') } },
    { dialect: 'postgres', source: postgresUrl === null ? null : ({ type: 'postgres', url: postgresUrl, schema: WAREHOUSE_SCHEMA } as DataSourceConfig) },
  ];
}

/** Runs a suite against the demo warehouse on SQLite and on PostgreSQL (visibly skipped without one). */
export function describeEachWarehouse(name: string, suite: (context: () => WarehouseContext) => void): void {
  for (const { dialect, source } of warehouseSources()) {
    const skip = source === null;
    (skip ? describe.skip : describe)(skip ? `${name} [postgres: SKIPPED, no SVC_TEST_POSTGRES_URL]` : `${name} [${dialect}]`, () => {
      let context: WarehouseContext | undefined;
      beforeAll(() => {
        context = { dialect, source: source!, warehouse: openWarehouse(source!, { timeoutMs: 30_000, demoPath: () => inject('demoWarehousePath') }) };
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
