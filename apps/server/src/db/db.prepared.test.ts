import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import { prepare, setPreparedStatements } from './db.prepared.js';

const itemsOfDeployment = prepare((db, p: { accountId: number; deploymentId: number; limit: number }) =>
  db.selectFrom('workspace_items').select(['id', 'name'])
    .where('account_id', '=', p.accountId).where('deployment_id', '=', p.deploymentId)
    // A value fixed by the shape: compiled in once, bound on every run.
    .where('type', '!=', 'FOLDER')
    .orderBy('id').limit(p.limit));

describeEachDialect('prepared statements', (t) => {
  it('compiles once and runs with each call\'s values, in or out of a transaction, as the built query would', async () => {
    const db = t().db.kysely;
    const seed = async () => seedAccount(db, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'dep', name: 'D', items: [
        { ref: 'a', type: 'WORKBOOK', name: `A ${uniqueSuffix()}` },
        { ref: 'f', type: 'FOLDER', name: 'F' },
        { ref: 'b', type: 'REPORT', name: `B ${uniqueSuffix()}` },
      ] }],
    });
    const one = await seed();
    const two = await seed();
    const accountOf = async (deploymentId: number) =>
      (await db.selectFrom('deployments').select('account_id').where('id', '=', deploymentId).executeTakeFirstOrThrow()).account_id;
    const first = { accountId: await accountOf(one.refs.dep!), deploymentId: one.refs.dep!, limit: 10 };
    const second = { accountId: await accountOf(two.refs.dep!), deploymentId: two.refs.dep!, limit: 1 };

    const built = await db.selectFrom('workspace_items').select(['id', 'name'])
      .where('account_id', '=', first.accountId).where('deployment_id', '=', first.deploymentId).where('type', '!=', 'FOLDER')
      .orderBy('id').limit(10).execute();
    expect(await itemsOfDeployment.execute(db, first)).toEqual(built);
    expect((await itemsOfDeployment.execute(db, first)).map((r) => r.id)).toEqual([one.refs.a, one.refs.b]);
    // The second call binds its own values: another account, and a limit of 1.
    expect((await itemsOfDeployment.execute(db, second)).map((r) => r.id)).toEqual([two.refs.a]);
    expect(await itemsOfDeployment.first(db, second)).toEqual(expect.objectContaining({ id: two.refs.a }));
    expect(await itemsOfDeployment.first(db, { ...second, deploymentId: 2_000_000_000 })).toBeUndefined();
    // Within a transaction (another Kysely instance over the same adapter) it runs on the transaction's connection.
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('workspace_items').set({ name: 'renamed in trx' }).where('id', '=', two.refs.a!).execute();
      expect((await itemsOfDeployment.first(trx, second))?.name).toBe('renamed in trx');
    });
  });

  it('builds every query afresh when turned off, with the same answers', async () => {
    const db = t().db.kysely;
    const { refs } = await seedAccount(db, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'dep', name: 'D', items: [{ ref: 'a', type: 'WORKBOOK', name: 'A' }] }],
    });
    const { account_id: accountId } = await db.selectFrom('deployments').select('account_id').where('id', '=', refs.dep!).executeTakeFirstOrThrow();
    const values = { accountId, deploymentId: refs.dep!, limit: 5 };
    const compiled = await itemsOfDeployment.execute(db, values);
    setPreparedStatements(db, false);
    try {
      expect(await itemsOfDeployment.execute(db, values)).toEqual(compiled);
      expect(compiled.map((r) => r.id)).toEqual([refs.a]);
    } finally {
      setPreparedStatements(db, true);
    }
  });

  it('builds the statement once per database, at its first run', async () => {
    let builds = 0;
    const statement = prepare((db, p: { id: number }) => {
      builds++;
      return db.selectFrom('accounts').select('id').where('id', '=', p.id);
    });
    expect(builds).toBe(0);
    await statement.execute(t().db.kysely, { id: 1 });
    await statement.execute(t().db.kysely, { id: 2 });
    await t().db.kysely.transaction().execute((trx) => statement.execute(trx, { id: 3 }));
    expect(builds).toBe(1);
    // A handle with a plugin gets its own copy, transformed by the plugin as it compiles.
    let transformed = 0;
    const observed = t().db.kysely.withPlugin({ transformQuery: (args) => (transformed++, args.node), transformResult: async (args) => args.result });
    await statement.execute(observed, { id: 4 });
    await statement.execute(observed, { id: 5 });
    expect([builds, transformed]).toEqual([2, 1]);
  });

  it('refuses to run without a value for a placeholder', async () => {
    const values = { accountId: 1, deploymentId: 1 } as unknown as { accountId: number; deploymentId: number; limit: number };
    await expect(itemsOfDeployment.execute(t().db.kysely, values)).rejects.toThrow('no value for limit');
  });
});
