import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { PostgresConnection } from 'pg-gateway';
import type { SqlSettings } from '../../core/core.config.js';
import type { DataContext } from '../../data/data.scope.js';
import type { Principal } from '../../core/core.principal.js';
import { cubeDeployment, cubeMeta } from '../cube.service.js';
import type { CubePrincipal } from '../cube.service.js';
import { SERVER_VERSION } from './sql.catalog.js';
import { loadParser, SqlSession } from './sql.session.js';
import { SqlError, wire } from './sql.wire.js';

// svc's SQL API (issue 36 part 3; docs/cube-sql.md): the Postgres wire protocol on its own port (SVC_SQL_PORT, off
// by default), so that psql and BI tools query the caller's views as tables. pg-gateway speaks the startup: SSLRequest
// (TLS when SVC_SQL_TLS_CERT and SVC_SQL_TLS_KEY are set), the startup message and the cleartext password exchange.
// The password is an API key or an embed token, resolved as the Cube REST API resolves its Authorization header;
// the user name is not read. md5 and SCRAM need the password in the clear on the server, and svc keeps only hashes of
// its keys, so the password travels as it is: set up TLS for anything but a local connection.


export interface SqlServerDeps {
  dc: DataContext;
  /** The Cube API's credential resolution (http.auth.ts resolveBareCredential over the app's authenticator). */
  resolveCredential: (credential: string) => Principal | Promise<Principal>;
}

/** The most bytes a connection may have buffered of one unfinished message (Postgres allows 1 GB; svc needs little). */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

export class SqlServer {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly perAccount = new Map<number, number>();

  constructor(private readonly deps: SqlServerDeps, private readonly settings: SqlSettings) {}

  /** The port it listens on (an ephemeral one when SVC_SQL_PORT is 0). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** How many connections an account holds now (for tests and metrics). */
  connectionsOf(accountId: number): number {
    return this.perAccount.get(accountId) ?? 0;
  }

  async start(): Promise<void> {
    await loadParser();
    const { tlsCert, tlsKey } = this.settings;
    const tls = tlsCert !== undefined && tlsKey !== undefined ? { cert: readFileSync(tlsCert), key: readFileSync(tlsKey) } : undefined;
    const server = createServer((socket) => this.accept(socket, tls));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.settings.port, this.settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops accepting and ends every connection (the app's close). */
  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(raw: Socket, tls: { cert: Buffer; key: Buffer } | undefined): void {
    this.sockets.add(raw);
    // Answers are several small messages: without this, Nagle's algorithm and the client's delayed ACK add ~40 ms.
    raw.setNoDelay(true);
    raw.on('error', () => undefined);
    raw.once('close', () => this.sockets.delete(raw));
    let session: SqlSession | undefined;
    let principal: CubePrincipal | undefined;
    let deploymentId: number | undefined;
    let refusal: SqlError | undefined;
    let counted: number | undefined;
    const connection: PostgresConnection = new PostgresConnection(raw, {
      serverVersion: SERVER_VERSION,
      authMode: 'cleartextPassword',
      ...(tls !== undefined ? { tls } : {}),
      validateCredentials: async (credentials, state) => {
        if (credentials.authMode !== 'cleartextPassword') return false;
        const resolved = await this.deps.resolveCredential(credentials.password);
        if (resolved.kind !== 'platform-user' && resolved.kind !== 'embed') return false;
        const database = state.clientInfo?.parameters.database;
        try {
          deploymentId = await cubeDeployment(this.deps.dc, resolved, database !== undefined && /^[1-9][0-9]{0,15}$/.test(database) ? database : undefined);
          // The deployment read in the caller's account (another account's is not found), under the caller's policies.
          await cubeMeta(this.deps.dc, resolved, deploymentId);
        } catch (error) {
          refusal = new SqlError('3D000', error instanceof Error ? error.message : 'no deployment', 'FATAL');
          return false;
        }
        const held = this.perAccount.get(resolved.accountId) ?? 0;
        if (held >= this.settings.maxConnectionsPerAccount) {
          refusal = new SqlError('53300', `too many connections for this account (at most ${this.settings.maxConnectionsPerAccount}: SVC_SQL_MAX_CONNECTIONS_PER_ACCOUNT)`, 'FATAL');
          return false;
        }
        this.perAccount.set(resolved.accountId, held + 1);
        counted = resolved.accountId;
        principal = resolved;
        return true;
      },
      onAuthenticated: (state) => {
        for (const [name, value] of [['client_encoding', 'UTF8'], ['server_encoding', 'UTF8'], ['DateStyle', 'ISO, MDY'], ['TimeZone', 'UTC'],
          ['integer_datetimes', 'on'], ['standard_conforming_strings', 'on'], ['is_superuser', 'off'], ['application_name', state.clientInfo?.parameters.application_name ?? '']] as const) {
          connection.sendData(wire.parameterStatus(name, value));
        }
        const parameters = state.clientInfo?.parameters;
        // From here on the connection is svc's: pg-gateway 0.2.4 frames only the first of several messages that
        // arrive in one chunk (a pipelined Parse, Bind, Describe, Execute, Sync), so svc reads the messages itself.
        const socket = connection.detach();
        session = new SqlSession(this.deps.dc, principal!, deploymentId!, { database: parameters?.database ?? parameters?.user ?? 'svc', user: parameters?.user ?? 'svc' },
          { rowCap: this.settings.rowCap, statementTimeoutMs: this.settings.statementTimeoutMs },
          (data) => connection.sendData(data), () => connection.socket.end());
        readMessages(socket, session);
      },
      onTlsUpgrade: () => {
        connection.socket.on('error', () => undefined);
      },
    });
    // A refusal other than a wrong password (no deployment, too many connections) is said as itself, not as 28P01.
    const failed = connection.sendAuthenticationFailedError.bind(connection);
    connection.sendAuthenticationFailedError = () => (refusal === undefined ? failed() : connection.sendError({ severity: 'FATAL', code: refusal.code, message: refusal.message }));
    raw.once('close', () => {
      if (counted !== undefined) {
        const left = (this.perAccount.get(counted) ?? 1) - 1;
        if (left <= 0) this.perAccount.delete(counted); else this.perAccount.set(counted, left);
      }
    });
  }
}

/**
 * Frames an authenticated connection's messages (a type byte, a length that counts itself, the body) and hands
 * them to its session one after another. A length below 4 or above MAX_MESSAGE_BYTES is a protocol violation: FATAL
 * 08P01 and the connection closes, as in Postgres; the server and every other connection go on.
 */
function readMessages(socket: Socket, session: SqlSession): void {
  let pending: Buffer = Buffer.alloc(0);
  let queue: Promise<void> = Promise.resolve();
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 5) {
      const length = pending.readInt32BE(1);
      if (length < 4 || length > MAX_MESSAGE_BYTES) {
        socket.write(wire.error(new SqlError(length < 4 ? '08P01' : '54000', length < 4 ? `invalid message length ${length}` : 'message too long', 'FATAL')));
        socket.destroy();
        pending = Buffer.alloc(0);
        return;
      }
      if (pending.length < length + 1) break;
      const message = Buffer.from(pending.subarray(0, length + 1));
      pending = pending.subarray(length + 1);
      queue = queue.then(() => session.handle(message));
    }
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The SQL API of this app (SVC_SQL_PORT), undefined when off: it listens once the app is ready. */
    sqlServer: SqlServer | undefined;
  }
}
