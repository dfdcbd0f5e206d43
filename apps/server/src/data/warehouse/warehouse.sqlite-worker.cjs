// The SQLite warehouse's worker (warehouse.sqlite.ts): one child process, one read-only connection to one file.
// The parent sends { id, sql, parameters, maxRows } and gets { id, fields, rows } or { id, error, code } back; rows
// cross with Node's structured clone ('advanced' serialization). A statement past its time is stopped by killing
// this process: better-sqlite3 cannot interrupt one. Plain CommonJS, so that it runs as it is from src/ and dist/.
'use strict';

const Database = require('better-sqlite3');

const path = process.argv[process.argv.length - 1];
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
/** Prepared statements by their text: a dashboard's widgets ask the same few again and again. */
const statements = new Map();

process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, sql, parameters, maxRows }) => {
  try {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (!statement.reader) throw new Error('only statements that return rows may run');
      statement.raw(true);
      if (statements.size > 200) statements.clear();
      statements.set(sql, statement);
    }
    const rows = [];
    for (const row of statement.iterate(...parameters)) {
      for (let i = 0; i < row.length; i++) {
        if (typeof row[i] === 'bigint') row[i] = Number(row[i]);
        else if (row[i] instanceof Uint8Array) row[i] = Buffer.from(row[i]).toString('base64');
      }
      rows.push(row);
      if (rows.length > maxRows) break;
    }
    process.send({ id, fields: statement.columns().map((c) => c.name), rows });
  } catch (error) {
    process.send({ id, error: String((error && error.message) || error), code: error && error.code });
  }
});
process.send({ ready: true });
