// The backend messages of the Postgres wire protocol that svc's SQL API writes itself (issue 36 part 3;
// docs/cube-sql.md). pg-gateway does the startup, TLS and password exchange; after it, every message is answered
// here: rows go out in the text format, so each value is its Postgres text form and each column names its type OID.
// https://www.postgresql.org/docs/current/protocol-message-formats.html

/** The type OIDs svc's answers use (pg_type.oid). */
export const OID = { bool: 16, int8: 20, int4: 23, text: 25, oid: 26, float8: 701, timestamp: 1114, numeric: 1700 } as const;

/** A column of an answer: its name and its type's OID. */
export interface WireColumn {
  name: string;
  oid: number;
}

/** Rows in text form: a value is its Postgres text, or null. */
export type WireRow = ReadonlyArray<string | null>;

/** A whole answer to one statement: columns (none for a command), rows and the command tag. */
export interface WireAnswer {
  columns?: WireColumn[];
  rows?: WireRow[];
  tag: string;
}

/** An error as Postgres reports it: SQLSTATE and message. */
export class SqlError extends Error {
  constructor(readonly code: string, message: string, readonly severity: 'ERROR' | 'FATAL' = 'ERROR') {
    super(message);
  }
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (value: string) => Buffer.concat([Buffer.from(value, 'utf8'), Buffer.from([0])]);
const int16 = (value: number) => { const b = Buffer.alloc(2); b.writeInt16BE(value); return b; };
const int32 = (value: number) => { const b = Buffer.alloc(4); b.writeInt32BE(value); return b; };

export const wire = {
  rowDescription(columns: readonly WireColumn[]): Buffer {
    return message('T', Buffer.concat([int16(columns.length), ...columns.flatMap((c) => [
      cstring(c.name), int32(0), int16(0), int32(c.oid), int16(c.oid === OID.bool ? 1 : c.oid === OID.int8 || c.oid === OID.timestamp ? 8 : -1), int32(-1), int16(0),
    ])]));
  },
  dataRow(row: WireRow): Buffer {
    return message('D', Buffer.concat([int16(row.length), ...row.flatMap((value) => {
      if (value === null) return [int32(-1)];
      const bytes = Buffer.from(value, 'utf8');
      return [int32(bytes.length), bytes];
    })]));
  },
  commandComplete: (tag: string) => message('C', cstring(tag)),
  emptyQuery: () => message('I', Buffer.alloc(0)),
  readyForQuery: (status: 'I' | 'T' | 'E') => message('Z', Buffer.from(status, 'latin1')),
  parseComplete: () => message('1', Buffer.alloc(0)),
  bindComplete: () => message('2', Buffer.alloc(0)),
  closeComplete: () => message('3', Buffer.alloc(0)),
  noData: () => message('n', Buffer.alloc(0)),
  parameterDescription: (oids: readonly number[]) => message('t', Buffer.concat([int16(oids.length), ...oids.map(int32)])),
  parameterStatus: (name: string, value: string) => message('S', Buffer.concat([cstring(name), cstring(value)])),
  error(error: SqlError): Buffer {
    return message('E', Buffer.concat([
      Buffer.from('S'), cstring(error.severity), Buffer.from('V'), cstring(error.severity),
      Buffer.from('C'), cstring(error.code), Buffer.from('M'), cstring(error.message), Buffer.from([0]),
    ]));
  },
};

/** The messages of a whole answer: its row description (when it has columns), its rows and its command tag. */
export function answerMessages(answer: WireAnswer, describe: boolean): Buffer[] {
  const out: Buffer[] = [];
  if (describe && answer.columns !== undefined) out.push(wire.rowDescription(answer.columns));
  for (const row of answer.rows ?? []) out.push(wire.dataRow(row));
  out.push(wire.commandComplete(answer.tag));
  return out;
}

/** The frontend messages svc reads after startup, decoded from one message's bytes (type byte first). */
export type FrontendMessage =
  | { type: 'Q'; sql: string }
  | { type: 'P'; name: string; sql: string; paramTypes: number[] }
  | { type: 'B'; portal: string; statement: string; formats: number[]; params: Array<Buffer | null>; resultFormats: number[] }
  | { type: 'D'; kind: 'S' | 'P'; name: string }
  | { type: 'E'; portal: string; maxRows: number }
  | { type: 'C'; kind: 'S' | 'P'; name: string }
  | { type: 'S' } | { type: 'H' } | { type: 'X' }
  | { type: 'other'; code: string };

/** A reader over one message that throws a 08P01 (protocol_violation) when the message is shorter than it says. */
class Reader {
  private at = 5;
  constructor(private readonly data: Uint8Array) {}
  private need(n: number): void {
    if (this.at + n > this.data.length) throw new SqlError('08P01', 'invalid message format: the message ends early');
  }
  int16(): number { this.need(2); const v = Buffer.from(this.data.buffer, this.data.byteOffset + this.at, 2).readInt16BE(); this.at += 2; return v; }
  int32(): number { this.need(4); const v = Buffer.from(this.data.buffer, this.data.byteOffset + this.at, 4).readInt32BE(); this.at += 4; return v; }
  byte(): string { this.need(1); return String.fromCharCode(this.data[this.at++]!); }
  cstring(): string {
    const end = this.data.indexOf(0, this.at);
    if (end === -1) throw new SqlError('08P01', 'invalid message format: a string without its end');
    const value = Buffer.from(this.data.buffer, this.data.byteOffset + this.at, end - this.at).toString('utf8');
    this.at = end + 1;
    return value;
  }
  bytes(n: number): Buffer { this.need(n); const v = Buffer.from(this.data.subarray(this.at, this.at + n)); this.at += n; return v; }
  count(): number {
    const n = this.int16();
    if (n < 0) throw new SqlError('08P01', 'invalid message format: a negative count');
    return n;
  }
}

/** Decodes one frontend message (as pg-gateway hands it: the type byte, the length, the body). */
export function readFrontendMessage(data: Uint8Array): FrontendMessage {
  const r = new Reader(data);
  const code = String.fromCharCode(data[0]!);
  switch (code) {
    case 'Q': return { type: 'Q', sql: r.cstring() };
    case 'P': {
      const name = r.cstring();
      const sql = r.cstring();
      const n = r.count();
      return { type: 'P', name, sql, paramTypes: Array.from({ length: n }, () => r.int32()) };
    }
    case 'B': {
      const portal = r.cstring();
      const statement = r.cstring();
      const formats = Array.from({ length: r.count() }, () => r.int16());
      const params = Array.from({ length: r.count() }, () => {
        const length = r.int32();
        return length < 0 ? null : r.bytes(length);
      });
      const resultFormats = Array.from({ length: r.count() }, () => r.int16());
      return { type: 'B', portal, statement, formats, params, resultFormats };
    }
    case 'D': case 'C': {
      const kind = r.byte();
      if (kind !== 'S' && kind !== 'P') throw new SqlError('08P01', `invalid ${code === 'D' ? 'Describe' : 'Close'} message subtype ${JSON.stringify(kind)}`);
      return { type: code, kind, name: r.cstring() };
    }
    case 'E': return { type: 'E', portal: r.cstring(), maxRows: r.int32() };
    case 'S': case 'H': case 'X': return { type: code };
    default: return { type: 'other', code };
  }
}
