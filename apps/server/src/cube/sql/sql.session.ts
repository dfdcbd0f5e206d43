import { loadModule, parseSync } from 'libpg-query';
import { AppError } from '../../core/core.errors.js';
import type { DataContext } from '../../data/data.scope.js';
import type { MetaCube } from '../../data/semantic/semantic.meta.js';
import { cubeLoad, cubeMeta } from '../cube.service.js';
import type { CubePrincipal } from '../cube.service.js';
import { nodeOf, unsupported } from './sql.ast.js';
import type { Node } from './sql.ast.js';
import { answerCatalogSelect, readsCatalog, SETTINGS } from './sql.catalog.js';
import type { Catalog, CatalogTable } from './sql.catalog.js';
import { translateSelect } from './sql.translate.js';
import { answerMessages, OID, readFrontendMessage, SqlError, wire } from './sql.wire.js';
import type { WireAnswer, WireColumn } from './sql.wire.js';

// One authenticated connection of the SQL API (issue 36 part 3; docs/cube-sql.md): the simple query protocol
// (`Q`, what psql sends) and the extended one (Parse, Bind, Describe, Execute, Sync: node-postgres's parameterised
// queries). Each statement is parsed by PostgreSQL's own parser (libpg-query, compiled to WASM) and answered from
// the caller's model: a SELECT over a view through Cube's `load` (the policy step, rollups, the result cache), a
// catalog query from sql.catalog.ts, SET/SHOW/BEGIN as a read-only Postgres would. Anything else is an SQL error
// (0A000, 42601...) and the connection stays usable.

let parserReady: Promise<void> | undefined;
/** Loads the parser's WASM module once per process. */
export const loadParser = (): Promise<void> => (parserReady ??= loadModule());

export interface SqlLimits {
  rowCap: number;
  statementTimeoutMs: number;
}

interface Prepared { sql: string; statements: Node[]; paramTypes: number[] }
interface Portal { prepared: Prepared; params: Array<string | null>; answer?: WireAnswer }

/** An AppError of the data path as the SQLSTATE Postgres would give it. */
function sqlErrorOf(error: unknown): SqlError {
  if (error instanceof SqlError) return error;
  if (error instanceof AppError) {
    const code = ({ forbidden: '42501', not_found: '42P01', query_timeout: '57014', invalid_parameter: '22023', invalid_query: '42000', unauthorized: '28000' } as Record<string, string>)[error.code] ?? 'XX000';
    return new SqlError(code, error.message);
  }
  return new SqlError('XX000', 'internal error: the statement was not answered');
}

export class SqlSession {
  private readonly prepared = new Map<string, Prepared>();
  private readonly portals = new Map<string, Portal>();
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipping = false;
  private inTransaction = false;

  constructor(
    private readonly dc: DataContext,
    private readonly principal: CubePrincipal,
    private readonly deploymentId: number,
    private readonly names: { database: string; user: string },
    private readonly limits: SqlLimits,
    private readonly write: (data: Buffer) => void,
    private readonly end: () => void,
  ) {}

  /** What one frontend message is answered with, written at once (one TCP segment where it fits, not one per message). */
  private out: Buffer[] = [];
  private send(data: Buffer): void {
    this.out.push(data);
  }

  private flush(): void {
    if (this.out.length === 0) return;
    const data = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out);
    this.out = [];
    this.write(data);
  }

  private close(): void {
    this.flush();
    this.end();
  }

  private status = (): 'I' | 'T' => (this.inTransaction ? 'T' : 'I');

  /** Handles one frontend message (its whole bytes). Never throws: an error is answered on the wire. */
  async handle(data: Uint8Array): Promise<void> {
    try {
      await this.dispatch(data);
    } finally {
      this.flush();
    }
  }

  private async dispatch(data: Uint8Array): Promise<void> {
    let message;
    try {
      message = readFrontendMessage(data);
    } catch (error) {
      this.fatal(sqlErrorOf(error));
      return;
    }
    if (message.type === 'X') return this.close();
    if (message.type === 'other') return this.fatal(new SqlError('08P01', `invalid frontend message type ${message.code.charCodeAt(0)}`));
    if (message.type === 'Q') return this.simpleQuery(message.sql);
    if (message.type === 'S') {
      this.skipping = false;
      this.send(wire.readyForQuery(this.status()));
      return;
    }
    if (message.type === 'H' || this.skipping) return;
    try {
      switch (message.type) {
        case 'P': {
          const statements = this.parse(message.sql);
          if (statements.length > 1) throw new SqlError('42601', 'cannot insert multiple commands into a prepared statement');
          this.prepared.set(message.name, { sql: message.sql, statements, paramTypes: message.paramTypes });
          this.send(wire.parseComplete());
          return;
        }
        case 'B': {
          const prepared = this.prepared.get(message.statement);
          if (prepared === undefined) throw new SqlError('26000', `prepared statement "${message.statement}" does not exist`);
          if (message.formats.some((f) => f !== 0) || message.resultFormats.some((f) => f !== 0)) throw unsupported('the binary format (use text)');
          this.portals.set(message.portal, { prepared, params: message.params.map((p) => (p === null ? null : p.toString('utf8'))) });
          this.send(wire.bindComplete());
          return;
        }
        case 'D': {
          if (message.kind === 'S') {
            const prepared = this.prepared.get(message.name);
            if (prepared === undefined) throw new SqlError('26000', `prepared statement "${message.name}" does not exist`);
            const count = Math.max(prepared.paramTypes.length, maxParam(prepared.sql));
            this.send(wire.parameterDescription(Array.from({ length: count }, (_, i) => prepared.paramTypes[i] || OID.text)));
            // The columns, found without running the statement (a SELECT over a view is translated, not loaded);
            // parameters stand in as '1'. A statement without rows (SET, BEGIN...) is NoData.
            const columns = await this.describe(prepared.statements[0], count);
            this.send(columns === undefined ? wire.noData() : wire.rowDescription(columns));
            return;
          }
          const portal = this.portals.get(message.name);
          if (portal === undefined) throw new SqlError('34000', `portal "${message.name}" does not exist`);
          portal.answer ??= await this.run(portal.prepared.statements[0], portal.params);
          this.send(portal.answer.columns === undefined ? wire.noData() : wire.rowDescription(portal.answer.columns));
          return;
        }
        case 'E': {
          const portal = this.portals.get(message.portal);
          if (portal === undefined) throw new SqlError('34000', `portal "${message.portal}" does not exist`);
          const answer = portal.answer ?? await this.run(portal.prepared.statements[0], portal.params);
          portal.answer = undefined;
          for (const out of answerMessages(answer, false)) this.send(out);
          return;
        }
        case 'C': {
          (message.kind === 'S' ? this.prepared : this.portals).delete(message.name);
          this.send(wire.closeComplete());
          return;
        }
      }
    } catch (error) {
      this.skipping = true;
      this.send(wire.error(sqlErrorOf(error)));
    }
  }

  private fatal(error: SqlError): void {
    this.send(wire.error(new SqlError(error.code, error.message, 'FATAL')));
    this.close();
  }

  private parse(sql: string): Node[] {
    if (sql.length > 1_000_000) throw new SqlError('54000', 'statement too long (at most 1,000,000 characters)');
    try {
      return (parseSync(sql).stmts ?? []).map((raw) => raw.stmt as Node);
    } catch (error) {
      throw new SqlError('42601', error instanceof Error ? error.message : 'syntax error');
    }
  }

  private async simpleQuery(sql: string): Promise<void> {
    try {
      const statements = this.parse(sql);
      if (statements.length === 0) this.send(wire.emptyQuery());
      for (const statement of statements) {
        for (const out of answerMessages(await this.run(statement, []), true)) this.send(out);
      }
    } catch (error) {
      this.send(wire.error(sqlErrorOf(error)));
    }
    this.send(wire.readyForQuery(this.status()));
  }

  /** One statement's whole answer, within the statement timeout. */
  private async run(statement: Node | undefined, params: Array<string | null>): Promise<WireAnswer> {
    if (statement === undefined) return { tag: 'EMPTY' };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SqlError('57014', 'canceling statement due to statement timeout')), this.limits.statementTimeoutMs);
    });
    try {
      return await Promise.race([this.answer(statement, params), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async answer(statement: Node, params: Array<string | null>): Promise<WireAnswer> {
    const [type, body] = nodeOf(statement);
    switch (type) {
      case 'SelectStmt': return this.select(body, params);
      case 'VariableSetStmt': return { tag: body.kind === 'VAR_RESET' || body.kind === 'VAR_RESET_ALL' ? 'RESET' : 'SET' };
      case 'VariableShowStmt': {
        const name = String(body.name).toLowerCase();
        if (name === 'all') return { columns: [{ name: 'name', oid: OID.text }, { name: 'setting', oid: OID.text }, { name: 'description', oid: OID.text }], rows: Object.entries(SETTINGS).map(([k, v]) => [k, v, '']), tag: 'SHOW' };
        const value = SETTINGS[name];
        if (value === undefined) throw new SqlError('42704', `unrecognized configuration parameter "${name}"`);
        return { columns: [{ name, oid: OID.text }], rows: [[value]], tag: 'SHOW' };
      }
      case 'TransactionStmt': {
        const kind = String(body.kind);
        if (kind === 'TRANS_STMT_BEGIN' || kind === 'TRANS_STMT_START') { this.inTransaction = true; return { tag: 'BEGIN' }; }
        if (kind === 'TRANS_STMT_COMMIT' || kind === 'TRANS_STMT_ROLLBACK') { this.inTransaction = false; return { tag: kind === 'TRANS_STMT_COMMIT' ? 'COMMIT' : 'ROLLBACK' }; }
        throw unsupported(kind.replace('TRANS_STMT_', ''));
      }
      case 'DiscardStmt': return { tag: 'DISCARD ALL' };
      case 'DeallocateStmt': {
        if (body.name === undefined) this.prepared.clear(); else this.prepared.delete(String(body.name));
        return { tag: 'DEALLOCATE' };
      }
      case 'InsertStmt': case 'UpdateStmt': case 'DeleteStmt': case 'CreateStmt': case 'DropStmt': case 'MergeStmt': case 'CopyStmt': case 'TruncateStmt': case 'AlterTableStmt': case 'ViewStmt': case 'CreateTableAsStmt':
        throw new SqlError('25006', `${type.replace(/Stmt$/, '').toUpperCase()}: svc's SQL API is read-only`);
      default: throw unsupported(`${type.replace(/Stmt$/, '')} statements`);
    }
  }

  private async cubes(): Promise<MetaCube[]> {
    return (await cubeMeta(this.dc, this.principal, this.deploymentId)).cubes;
  }

  private async catalog(): Promise<Catalog> {
    const tables: CatalogTable[] = (await this.cubes()).map((cube, i) => ({
      oid: 16384 + i,
      name: cube.name,
      description: cube.title,
      columns: [...cube.dimensions, ...cube.measures].map((m) => ({
        name: m.name.slice(cube.name.length + 1),
        description: m.title,
        typeOid: cube.measures.includes(m) || m.type === 'number' ? OID.numeric : m.type === 'time' ? OID.timestamp : m.type === 'boolean' ? OID.bool : OID.text,
      })),
    }));
    return { tables, database: this.names.database, user: this.names.user };
  }

  /** The columns a statement answers with, without running it against the data (Describe of a statement). */
  private async describe(statement: Node | undefined, paramCount: number): Promise<WireColumn[] | undefined> {
    const [type, body] = nodeOf(statement);
    if (type === 'SelectStmt') return (await this.select(body, Array.from({ length: paramCount }, () => '1'), true)).columns;
    if (type === 'VariableShowStmt') return (await this.answer(statement!, [])).columns;
    return undefined;
  }

  private async select(select: Node, params: Array<string | null>, describeOnly = false): Promise<WireAnswer> {
    if (select.fromClause === undefined || readsCatalog(select)) {
      if (select.op !== undefined && select.op !== 'SETOP_NONE' && !readsCatalog(select)) throw unsupported('UNION, INTERSECT and EXCEPT over views');
      return answerCatalogSelect(select, await this.catalog(), params, select.fromClause === undefined);
    }
    if (select.op !== undefined && select.op !== 'SETOP_NONE') throw unsupported('UNION, INTERSECT and EXCEPT over views');
    const from = select.fromClause as Node[];
    const [type, relation] = nodeOf(from[0]);
    if (from.length !== 1 || type !== 'RangeVar') throw unsupported('a join or subquery (query one view at a time)');
    if (relation.schemaname !== undefined && relation.schemaname !== 'public') throw new SqlError('3F000', `schema "${relation.schemaname}" does not exist`);
    const name = String(relation.relname);
    const cube = (await this.cubes()).find((c) => c.name === name);
    if (cube === undefined) throw new SqlError('42P01', `relation "${name}" does not exist`);
    const { query, outputs } = translateSelect(select, cube, relation.alias?.aliasname ?? name, params, this.limits.rowCap);
    if (describeOnly) return { columns: outputs.map((o) => ({ name: o.name, oid: o.oid })), tag: 'SELECT' };
    const answer = await cubeLoad(this.dc, this.principal, this.deploymentId, query);
    const data = answer.results[0]!.data as Array<Record<string, unknown>>;
    const text = (value: unknown, time: boolean): string | null => {
      if (value === null || value === undefined) return null;
      if (typeof value === 'boolean') return value ? 't' : 'f';
      const s = String(value);
      return time ? s.replace('T', ' ').replace(/\.000$/, '') : s;
    };
    return {
      columns: outputs.map((o) => ({ name: o.name, oid: o.oid })),
      rows: data.map((row) => outputs.map((o) => text(row[o.key], o.time))),
      tag: `SELECT ${data.length}`,
    };
  }
}

/** The highest `$n` of a statement's text: how many parameters it takes when Parse names none of their types. */
function maxParam(sql: string): number {
  return Math.max(0, ...[...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
}

