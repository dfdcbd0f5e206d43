import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/db.schema.js';
import { seedAccount, uniqueSuffix } from './factory.js';
import type { SeededAccount } from './factory.js';

/**
 * Every kind of credential the isolation matrix sends (the rows of its table), in the table's column order.
 * Embed tokens are sent as `Authorization: Embed-Token <jwt>`; the console session as its cookie together with
 * `X-Requested-With: svc`, so that a refusal says something about the principal, not about the CSRF guard.
 */
export const CREDENTIALS = [
  'none',
  'adminKey',
  'memberGranted',
  'memberUngranted',
  'otherAccountAdminKey',
  'embedOwner',
  'embedOtherTenant',
  'embedOtherAccount',
  'embedOtherDeployment',
  'embedInternalId',
  'consoleSession',
  'embedRevoked',
  'embedExpired',
] as const;
export type Credential = (typeof CREDENTIALS)[number];

/**
 * What each marker string is written into. Every marker is a distinctive lowercase string seeded into one place
 * (a name, a title, a comment body, a warehouse row...), so that a response body carrying it proves that the
 * caller was shown that place's data.
 */
export const MARKER_GROUPS = {
  /** Alice (account A's admin): her firstName, shown as the `user` of the items she created. */
  aliceFirstName: 'aPlatformUsers',
  /** Folder F of A's prod deployment (granted to the member mona) and the workbooks inside it. */
  aFolderName: 'aGrantedItems',
  aProdWorkbookName: 'aGrantedItems',
  /** A workbook at the root of A's prod deployment: created by alice, granted to nobody. */
  aPrivateName: 'aPrivateItem',
  /** A report at the root of A's prod deployment created by the member nick (no grants). */
  aNickReportName: 'aNickItem',
  /** Dashboards of A's prod deployment (titles), and the rows its warehouse answers with. */
  aProdDashTitle: 'aProdDashboards',
  aWriteDashTitle: 'aProdDashboards',
  aAppDashTitle: 'aProdDashboards',
  aProdData: 'aProdDashboards',
  /** A's stage deployment: its workbook, its dashboard and its warehouse rows. */
  aStageWorkbookName: 'aStageItems',
  aStageDashTitle: 'aStageDashboards',
  aStageData: 'aStageDashboards',
  /** A's embed tenant `shared`: the owner viewer, a seeded viewer, their comments on prod and on stage. */
  aSharedUsername: 'aTenantShared',
  aSharedEmail: 'aTenantShared',
  aSharedSeededUsername: 'aTenantShared',
  aSharedComment: 'aTenantShared',
  aSharedStageComment: 'aTenantShared',
  /** A's embed tenant `second`: its viewer and their comment. */
  aSecondUsername: 'aTenantSecond',
  aSecondComment: 'aTenantSecond',
  /** Account B: its admin, its workspace item, its dashboards and rows, and its tenant of the same name `shared`. */
  bAdminFirstName: 'bPlatform',
  bWorkbookName: 'bPlatform',
  bDashTitle: 'bDashboards',
  bAppDashTitle: 'bDashboards',
  bData: 'bDashboards',
  bSharedUsername: 'bTenantShared',
  bSharedComment: 'bTenantShared',
} as const;
export type MarkerKey = keyof typeof MARKER_GROUPS;
export type MarkerGroup = (typeof MARKER_GROUPS)[MarkerKey];

/** A session minted with Generate Session and exchanged: its secret id, its token, its embed user. */
export interface MintedSession {
  sessionId: string;
  token: string;
  headers: { authorization: string };
  embedUserId: number | null;
}

/** The data every cell of the matrix is asked about: two accounts, their tenants, viewers and comments. */
export interface IsolationWorld {
  suffix: string;
  /** The marker text of each key. */
  markers: Record<MarkerKey, string>;
  /** Account A, the owner of every resource the matrix addresses: users alice (admin), mona (member, granted folder F, and folder Editable as an editor), nick (member), cora (admin, the bystander who signs in). */
  a: SeededAccount;
  /** Account B, the other account: users admin and bea (a bystander member). */
  b: SeededAccount;
  password: string;
  emails: { alice: string; cora: string; mona: string };
  /** Embed tenant names: `shared` exists in both accounts (same name, different tenants); `second` only in A. */
  tenants: { shared: string; second: string };
  publicIds: { aProd: string; aWrite: string; aApp: string; aStage: string; bProd: string; bApp: string; aEdit: string };
  /** The embed sessions behind the embed credential kinds. */
  sessions: Record<'owner' | 'otherTenant' | 'otherAccount' | 'otherDeployment' | 'internalId' | 'revoked' | 'expired', MintedSession>;
  /** The console cookie of alice (`svc_console=...`). */
  consoleCookie: string;
  /** Thread roots seeded on the dashboards: the owner's on aProd (the reply target), and the others'. */
  roots: { aSharedOnProd: number; aSecondOnProd: number; aSharedOnStage: number; bSharedOnProd: number };
  /** The owner viewer's externalId: also the externalId of the other tenant's, the other account's and the other deployment's viewers. */
  ownerExternalId: string;
  /** `Authorization` / `Cookie` headers of a credential kind. */
  headersOf(credential: Credential): Record<string, string>;
  /** A fresh session of account `a` or `b` (its admin key), exchanged for a token. */
  mint(account: 'a' | 'b', body: Record<string, unknown>): Promise<MintedSession>;
  /** A fresh session id of account `a` or `b`, not exchanged. */
  generate(account: 'a' | 'b', body: Record<string, unknown>): Promise<string>;
  /** A fresh console cookie of alice. */
  login(): Promise<string>;
}

const PASSWORD = 'isolation matrix password';

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** A semantic view over no table: one row whose label is the marker, so any query of the deployment shows it. */
function markerViews(marker: string) {
  return [{
    name: 'marks',
    sql: `SELECT '${marker}' AS label`,
    dimensions: [{ name: 'label', type: 'string' as const }],
    measures: [{ name: 'count', type: 'count' as const }],
  }];
}

/** The query every data cell runs: the deployment's one marker row. */
export const MARKER_QUERY = { dimensions: ['marks.label'], measures: ['marks.count'] };

function classicDashboard(publicId: string, title: string, report: string) {
  return {
    publicId, status: 'published' as const, allowEmbed: true, title,
    config: { widgets: [{ id: 'chart', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { snapshotIndex: 0 } }] },
    reportSnapshots: [{ report, kind: 'table', meta: { query: MARKER_QUERY } }],
  };
}

function appDashboard(publicId: string, title: string) {
  return { publicId, status: 'published' as const, allowEmbed: true, title, config: { kind: 'APP', app: { html: '<p>app</p>' } } };
}

/**
 * Seeds the two accounts of the isolation matrix through the real import and the real session flow, and mints
 * one credential of every kind. `travel` runs `fn` with the app's clock moved by `ms` (the expired token is minted
 * a whole token lifetime in the past).
 *
 * @example
 * const world = await seedIsolationWorld(app, db.kysely, { warehousePath, tokenTtlMs, travel });
 * await app.inject({ url: `/api/v1/embed/dashboard/${world.publicIds.aProd}`, headers: world.headersOf('embedOwner') });
 */
export async function seedIsolationWorld(
  app: FastifyInstance,
  db: Kysely<Database>,
  options: { warehousePath: string; tokenTtlMs: number; travel: <T>(ms: number, fn: () => Promise<T>) => Promise<T> },
): Promise<IsolationWorld> {
  const suffix = uniqueSuffix();
  const markers = Object.fromEntries(Object.keys(MARKER_GROUPS).map((key) => [key, `zq${kebab(key)}-${suffix}`])) as Record<MarkerKey, string>;
  const tenants = { shared: `shared-${suffix}`, second: `second-${suffix}` };
  const publicIds = {
    aProd: `iso-a-prod-${suffix}`, aWrite: `iso-a-write-${suffix}`, aApp: `iso-a-app-${suffix}`, aStage: `iso-a-stage-${suffix}`,
    bProd: `iso-b-prod-${suffix}`, bApp: `iso-b-app-${suffix}`,
    aEdit: `iso-a-edit-${suffix}`,
  };
  const emails = { alice: `alice-${suffix}@a.invalid`, cora: `cora-${suffix}@a.invalid`, mona: `mona-${suffix}@a.invalid` };
  const warehouse = { type: 'sqlite' as const, path: options.warehousePath };

  const a = await seedAccount(db, {
    users: [
      { ref: 'alice', role: 'admin', email: emails.alice, firstName: markers.aliceFirstName, password: PASSWORD },
      { ref: 'mona', role: 'member', email: emails.mona },
      { ref: 'nick', role: 'member' },
      { ref: 'cora', role: 'admin', email: emails.cora, password: PASSWORD },
    ],
    deployments: [
      {
        ref: 'prod', name: 'Prod', dataSource: warehouse, semanticViews: markerViews(markers.aProdData),
        items: [
          {
            ref: 'folder', type: 'FOLDER', name: markers.aFolderName, createdBy: 'alice', grants: [{ user: 'mona' }],
            children: [
              { ref: 'wbProd', type: 'WORKBOOK', name: markers.aProdWorkbookName, createdBy: 'alice', dashboard: classicDashboard(publicIds.aProd, markers.aProdDashTitle, 'rpProd') },
              { ref: 'wbWrite', type: 'WORKBOOK', name: 'Write targets', createdBy: 'alice', dashboard: classicDashboard(publicIds.aWrite, markers.aWriteDashTitle, 'rpProd') },
              { ref: 'wbApp', type: 'WORKBOOK', name: 'App', createdBy: 'alice', dashboard: appDashboard(publicIds.aApp, markers.aAppDashTitle) },
              { ref: 'rpProd', type: 'REPORT', name: 'Marks', createdBy: 'alice' },
            ],
          },
          { ref: 'private', type: 'WORKBOOK', name: markers.aPrivateName, createdBy: 'alice' },
          { ref: 'nickReport', type: 'REPORT', name: markers.aNickReportName, createdBy: 'nick' },
          // Issue 33, editor grants: a folder mona may change (her grant is an editor's), with a dashboard she did not create.
          {
            ref: 'editFolder', type: 'FOLDER', name: 'Editable', createdBy: 'alice', grants: [{ user: 'mona', role: 'editor' }],
            children: [
              { ref: 'wbEdit', type: 'WORKBOOK', name: 'Editable workbook', createdBy: 'alice', dashboard: classicDashboard(publicIds.aEdit, 'Editable', 'rpEdit') },
              { ref: 'rpEdit', type: 'REPORT', name: 'Editable marks', createdBy: 'alice' },
            ],
          },
        ],
        views: [{ user: 'cora', item: 'wbProd', at: '2026-01-01T00:00:00.000Z' }, { user: 'cora', item: 'private', at: '2026-01-01T00:00:00.000Z' }],
        favorites: [{ user: 'cora', item: 'wbProd' }, { user: 'cora', item: 'private' }],
      },
      {
        ref: 'stage', name: 'Stage', dataSource: warehouse, semanticViews: markerViews(markers.aStageData),
        items: [
          { ref: 'wbStage', type: 'WORKBOOK', name: markers.aStageWorkbookName, createdBy: 'alice', dashboard: classicDashboard(publicIds.aStage, markers.aStageDashTitle, 'rpStage') },
          { ref: 'rpStage', type: 'REPORT', name: 'Stage marks', createdBy: 'alice' },
        ],
      },
    ],
    embedTenants: [
      { name: tenants.shared, users: [{ externalId: `seeded-${suffix}`, username: markers.aSharedSeededUsername }] },
      { name: tenants.second },
    ],
  });

  const b = await seedAccount(db, {
    users: [{ ref: 'admin', role: 'admin', firstName: markers.bAdminFirstName }, { ref: 'bea', role: 'member' }],
    deployments: [{
      ref: 'prod', name: 'Prod', dataSource: warehouse, semanticViews: markerViews(markers.bData),
      items: [
        { ref: 'wbB', type: 'WORKBOOK', name: markers.bWorkbookName, createdBy: 'admin', dashboard: classicDashboard(publicIds.bProd, markers.bDashTitle, 'rpB') },
        { ref: 'wbBApp', type: 'WORKBOOK', name: 'B app', createdBy: 'admin', dashboard: appDashboard(publicIds.bApp, markers.bAppDashTitle) },
        { ref: 'rpB', type: 'REPORT', name: 'B marks', createdBy: 'admin' },
      ],
      views: [{ user: 'bea', item: 'wbB', at: '2026-01-01T00:00:00.000Z' }],
      favorites: [{ user: 'bea', item: 'wbB' }],
    }],
    embedTenants: [{ name: tenants.shared }],
  });

  const generate = async (account: 'a' | 'b', body: Record<string, unknown>): Promise<string> => {
    const key = account === 'a' ? a.keys.alice! : b.keys.admin!;
    const res = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: { authorization: `Bearer ${key}` }, payload: body });
    if (res.statusCode !== 200) throw new Error(`generate-session answered ${res.statusCode}: ${res.body}`);
    return res.json().sessionId as string;
  };
  const mint = async (account: 'a' | 'b', body: Record<string, unknown>): Promise<MintedSession> => {
    const sessionId = await generate(account, body);
    const exchanged = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } });
    if (exchanged.statusCode !== 200) throw new Error(`session/token answered ${exchanged.statusCode}: ${exchanged.body}`);
    const token = exchanged.json().token as string;
    const headers = { authorization: `Embed-Token ${token}` };
    const current = await app.inject({ url: '/api/v1/embed/session', headers });
    return { sessionId, token, headers, embedUserId: (current.json().session?.embedUserId ?? null) as number | null };
  };
  const login = async (): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: emails.alice, password: PASSWORD } });
    const cookie = res.cookies.find((c) => c.name === 'svc_console');
    if (res.statusCode !== 200 || cookie === undefined) throw new Error(`login answered ${res.statusCode}: ${res.body}`);
    return `svc_console=${cookie.value}`;
  };

  // One embed user, externalId `owner`, in A's tenant `shared`, holds the owner, other-deployment, revoked and
  // expired sessions; the other tenant's and the other account's viewers reuse the same externalId (and B's
  // tenant the same name), so only the tenant and the account tell them apart.
  const ownerExternalId = `owner-${suffix}`;
  // Issue 35 saved charts and views: every embed session may explore and save (settings.explore create), so that
  // the matrix's refusals of saved charts and views say something about the credential, not about the level.
  const explore = { settings: { explore: 'create' } };
  const ownerBody = { externalId: ownerExternalId, embedTenantName: tenants.shared, ...explore };
  const expired = await options.travel(-(options.tokenTtlMs + 3_600_000), () => mint('a', { ...ownerBody, deploymentId: a.refs.prod }));
  const owner = await mint('a', { ...ownerBody, deploymentId: a.refs.prod, username: markers.aSharedUsername, email: `${markers.aSharedEmail}@a.invalid` });
  const otherTenant = await mint('a', { externalId: ownerExternalId, embedTenantName: tenants.second, deploymentId: a.refs.prod, username: markers.aSecondUsername, ...explore });
  const otherAccount = await mint('b', { ...ownerBody, deploymentId: b.refs.prod, username: markers.bSharedUsername });
  const otherDeployment = await mint('a', { ...ownerBody, deploymentId: a.refs.stage });
  const internalId = await mint('a', { internalId: emails.mona, deploymentId: a.refs.prod, ...explore });
  const revoked = await mint('a', { ...ownerBody, deploymentId: a.refs.prod });
  const revoke = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: { authorization: `Bearer ${a.keys.alice}` }, payload: { sessionId: revoked.sessionId } });
  if (revoke.statusCode !== 204) throw new Error(`revoke answered ${revoke.statusCode}: ${revoke.body}`);
  const consoleCookie = await login();

  const postRoot = async (session: MintedSession, publicId: string, body: string): Promise<number> => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: session.headers, payload: { body } });
    if (res.statusCode !== 201) throw new Error(`posting a comment answered ${res.statusCode}: ${res.body}`);
    return res.json().id as number;
  };
  const roots = {
    aSharedOnProd: await postRoot(owner, publicIds.aProd, markers.aSharedComment),
    aSecondOnProd: await postRoot(otherTenant, publicIds.aProd, markers.aSecondComment),
    aSharedOnStage: await postRoot(otherDeployment, publicIds.aStage, markers.aSharedStageComment),
    bSharedOnProd: await postRoot(otherAccount, publicIds.bProd, markers.bSharedComment),
  };

  const sessions = { owner, otherTenant, otherAccount, otherDeployment, internalId, revoked, expired };
  const headersOf = (credential: Credential): Record<string, string> => {
    switch (credential) {
      case 'none': return {};
      case 'adminKey': return { authorization: `Bearer ${a.keys.alice}` };
      case 'memberGranted': return { authorization: `Bearer ${a.keys.mona}` };
      case 'memberUngranted': return { authorization: `Bearer ${a.keys.nick}` };
      case 'otherAccountAdminKey': return { authorization: `Bearer ${b.keys.admin}` };
      case 'embedOwner': return owner.headers;
      case 'embedOtherTenant': return otherTenant.headers;
      case 'embedOtherAccount': return otherAccount.headers;
      case 'embedOtherDeployment': return otherDeployment.headers;
      case 'embedInternalId': return internalId.headers;
      case 'consoleSession': return { cookie: consoleCookie, 'x-requested-with': 'svc' };
      case 'embedRevoked': return revoked.headers;
      case 'embedExpired': return expired.headers;
    }
  };

  return {
    suffix, markers, a, b, password: PASSWORD, emails, tenants, publicIds, sessions, consoleCookie, roots, ownerExternalId,
    headersOf, mint, generate, login,
  };
}
