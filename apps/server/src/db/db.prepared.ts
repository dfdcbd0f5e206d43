import type { Compilable, CompiledQuery, Kysely, KyselyPlugin } from 'kysely';
import type { Database } from './db.schema.js';

/** Stands for one named parameter while a statement is built; replaced by its value when it runs. */
class Slot {
  constructor(readonly name: string) {}
}

/**
 * What a compiled statement is valid for: a database handle and its transactions (Kysely gives them one adapter),
 * with the same plugins (which transform a query as it is compiled; `withPlugin` makes a handle that needs its own).
 */
type Handle = object;

const handleOf = (db: Kysely<Database>): Handle => db.getExecutor().adapter;

const samePlugins = (a: readonly KyselyPlugin[], b: readonly KyselyPlugin[]): boolean =>
  a.length === b.length && a.every((plugin, i) => plugin === b[i]);

/** Databases whose statements are built afresh on every call (SVC_PREPARED_STATEMENTS=false). */
const uncompiled = new WeakSet<Handle>();

/**
 * Turns compiling once on or off for a database (and its transactions). Off is the old path, every query built
 * and compiled on every call; it exists so that a benchmark can measure both in one run (bench/README.md).
 */
export function setPreparedStatements(db: Kysely<Database>, enabled: boolean): void {
  if (enabled) uncompiled.delete(handleOf(db));
  else uncompiled.add(handleOf(db));
}

function valueOf(values: object, name: string): unknown {
  const value = (values as Record<string, unknown>)[name];
  if (value === undefined) throw new Error(`prepared statement: no value for ${name}`);
  return value;
}

/** The row a query builder's `execute` gives. */
type RowOf<Q> = Q extends { execute(): Promise<Array<infer R>> } ? R : never;

/** A statement of fixed shape, compiled once per database, run with new values. */
export interface Prepared<P, R> {
  /** Every row. */
  execute(db: Kysely<Database>, values: P): Promise<R[]>;
  /** The first row, or undefined. */
  first(db: Kysely<Database>, values: P): Promise<R | undefined>;
}

/**
 * Kysely builds a query's tree and compiles it to SQL on every call, which allocates more than running it. A
 * statement whose shape never changes (the same SQL whatever its values) is built here once per database with a
 * placeholder for each value, compiled, and then run with the values put in the placeholders' places. A value
 * fixed in `build` (not taken from `params`) is compiled in and bound as it is on every run.
 *
 * `build` must use `params` only as values handed to Kysely (`where`, `values`, `set`, `limit`, `sql` values):
 * never to decide the shape in JavaScript, and never in an `in` list, whose length is part of the shape.
 *
 * @example
 * const byPublicId = prepare((db, p: { accountId: number; publicId: string }) =>
 *   db.selectFrom('dashboards').selectAll().where('account_id', '=', p.accountId).where('public_id', '=', p.publicId));
 * const dashboard = await byPublicId.first(db, { accountId: 7, publicId: 'sales' });
 */
export function prepare<P extends object, Q extends Compilable<unknown> & { execute(): Promise<unknown[]> }>(
  build: (db: Kysely<Database>, params: P) => Q,
): Prepared<P, RowOf<Q>> {
  type R = RowOf<Q>;
  const compiledFor = new WeakMap<Handle, Array<{ plugins: readonly KyselyPlugin[]; compiled: CompiledQuery<R> }>>();
  const slots = new Proxy({}, { get: (_, name) => new Slot(String(name)) }) as P;

  function compiledOf(db: Kysely<Database>, handle: Handle): CompiledQuery<R> {
    const { plugins } = db.getExecutor();
    let entries = compiledFor.get(handle);
    if (entries === undefined) compiledFor.set(handle, (entries = []));
    const found = entries.find((entry) => samePlugins(entry.plugins, plugins));
    if (found !== undefined) return found.compiled;
    const compiled = build(db, slots).compile() as CompiledQuery<R>;
    entries.push({ plugins, compiled });
    return compiled;
  }

  async function execute(db: Kysely<Database>, values: P): Promise<R[]> {
    const handle = handleOf(db);
    if (uncompiled.has(handle)) return (await db.executeQuery<R>(build(db, values).compile() as CompiledQuery<R>)).rows;
    const compiled = compiledOf(db, handle);
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? valueOf(values, p.name) : p));
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  }

  return {
    execute,
    first: async (db, values) => (await execute(db, values))[0],
  };
}
