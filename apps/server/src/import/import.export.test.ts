import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOwnDatabase } from '../../test/own-database.js';
import type { OwnDatabase } from '../../test/own-database.js';
import { runSvc } from '../../test/svc-process.js';
import { Sealer } from '../core/core.sealed.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';
import { exportAccounts } from './import.export.js';
import { importFile, ImportError } from './import.js';
import type { ImportFile } from './import.js';

/**
 * Issue 33 part 7 (the export half): `svc export` writes what `svc import` reads. The demo's file, imported, exported,
 * imported into an empty database and exported again, gives the same file; what a file must not carry (API keys,
 * passwords, a PostgreSQL password) stays out, and an exported `****` password is refused by the import at its path.
 */
const DEMO = JSON.parse(readFileSync(new URL('../../demo/demo.json', import.meta.url), 'utf8')) as ImportFile;
const postgresUrl = inject('postgresUrl');

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skip = dialect === 'postgres' && postgresUrl === null;
  (skip ? describe.skip : describe)(`svc export [${dialect}${skip ? ': SKIPPED, no SVC_TEST_POSTGRES_URL' : ''}]`, () => {
    const opened: Array<{ database: OwnDatabase; db: Db }> = [];
    const fresh = async () => {
      const database = await createOwnDatabase(dialect === 'sqlite' ? null : postgresUrl, 'svc_export');
      const db = openDatabase(database.url);
      await migrateToLatest(db);
      opened.push({ database, db });
      return { db, url: database.url };
    };
    const sealer = new Sealer([]);
    let first: ImportFile;

    beforeAll(async () => {
      const { db } = await fresh();
      await importFile(db.kysely, DEMO, new Date('2026-11-28T00:00:00Z'));
      first = await exportAccounts(db.kysely, sealer);
    });

    afterAll(async () => {
      for (const { database, db } of opened) {
        await db.close();
        await database.drop();
      }
    });

    it('gives the same file again after export, import into an empty database, export', async () => {
      const { db } = await fresh();
      await importFile(db.kysely, first, new Date('2026-12-01T00:00:00Z'));
      expect(await exportAccounts(db.kysely, sealer)).toEqual(first);
    });

    it('writes a grant\'s role only when it is editor, and an editor grant round-trips', async () => {
      const sales = (file: ImportFile) => file.accounts[0]!.deployments![0]!.items!.find((item) => item.name === 'Sales')!;
      // Refs are made from the order of the rows: the group's is the export's own.
      expect(sales(first).grants).toEqual([{ group: first.accounts[0]!.groups![0]!.ref }]);
      const withEditor = structuredClone(DEMO);
      withEditor.accounts[0]!.deployments![0]!.items!.find((item) => item.name === 'Sales')!.grants = [{ group: 'sales', role: 'editor' }];
      const { db } = await fresh();
      await importFile(db.kysely, withEditor, new Date('2026-11-28T00:00:00Z'));
      const exported = await exportAccounts(db.kysely, sealer);
      expect(sales(exported).grants).toEqual([{ group: exported.accounts[0]!.groups![0]!.ref, role: 'editor' }]);
      const again = await fresh();
      await importFile(again.db.kysely, exported, new Date('2026-12-01T00:00:00Z'));
      expect(await exportAccounts(again.db.kysely, sealer)).toEqual(exported);
    });

    it('carries every user, group, deployment, item, dashboard and snapshot of the demo, and no API key or password', () => {
      const [account] = first.accounts;
      const [demo] = DEMO.accounts;
      expect(account!.tenantName).toBe(demo!.tenantName);
      expect(account!.users!.map((u) => u.email)).toEqual(demo!.users!.map((u) => u.email));
      expect(account!.deployments![0]!.semanticViews).toEqual(demo!.deployments![0]!.semanticViews);
      const publicIds = (file: ImportFile) => JSON.stringify(file).match(/"publicId":"[^"]+"/g)!.sort();
      expect(publicIds(first)).toEqual(publicIds(DEMO));
      const text = JSON.stringify(first);
      for (const user of demo!.users!) for (const key of user.apiKeys ?? []) expect(text).not.toContain(key);
      expect(text).not.toContain('"password"');
      expect(text).not.toContain('"apiKeys"');
    });

    it('writes a PostgreSQL password as ****, which the import refuses at its path until it is given back', async () => {
      const { db } = await fresh();
      await importFile(db.kysely, { accounts: [{ name: 'Pg', tenantName: 'pg-export', deployments: [{ name: 'Wh', dataSource: { type: 'postgres', url: 'postgres://svc:hunter2@db.internal/wh' } }] }] });
      const file = await exportAccounts(db.kysely, sealer, 'pg-export');
      expect(JSON.stringify(file)).not.toContain('hunter2');
      expect(file.accounts[0]!.deployments![0]!.dataSource).toEqual({ type: 'postgres', url: 'postgres://svc:****@db.internal/wh' });
      const { db: empty } = await fresh();
      const refused = await importFile(empty.kysely, file).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ImportError);
      expect((refused as ImportError).path).toBe('$.accounts[0].deployments[0].dataSource.url');
    });

    it('runs as svc export: the file on stdout, one account with --account, exit 1 naming an unknown tenant', async () => {
      const { db, url } = await fresh();
      await importFile(db.kysely, DEMO, new Date('2026-11-28T00:00:00Z'));
      const all = await runSvc(['export', '--db', url]);
      expect(all.code, all.stderr).toBe(0);
      expect(JSON.parse(all.stdout)).toEqual(first);
      const unknown = await runSvc(['export', '--db', url, '--account', 'nobody-here']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('nobody-here');
    }, 60_000);
  });
}
