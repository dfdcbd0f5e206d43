import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { startFakeAi, toolCallReply } from '../../test/fake-ai.js';
import type { FakeAi } from '../../test/fake-ai.js';
import { CREDENTIALS, MARKER_GROUPS, MARKER_QUERY, seedIsolationWorld } from '../../test/isolation.js';
import type { Credential, IsolationWorld, MarkerGroup, MarkerKey, MintedSession } from '../../test/isolation.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { loadConfig } from '../core/core.config.js';
import type { RateLimits } from './http.rate-limit.js';

/*
 * Issue 8 (hardening), part 2: the isolation matrix. Every operation of the OpenAPI document, against every
 * resource kind it addresses, with every kind of credential. The expected status of each cell is written below;
 * besides the status, every answer (2xx or not) is searched for the marker strings seeded into the data of other
 * accounts, tenants, deployments and users, and every write that is refused is checked to have changed nothing.
 *
 * Where the expectation comes from:
 * - SPEC "Authentication" (comments need an embed tenant: 403 for API keys, console sessions and internalId
 *   sessions; 401 for a missing, invalid, expired or revoked token), SPEC B rules 5, 6, 8 and 10, the Errors table.
 * - DESIGN "Credentials and principals", "What SPEC.md leaves not shown" (Generate Session, Revoke and the
 *   embed-user admin need an admin's API key; a publicId of another account does not resolve: 404; a deployment
 *   of another session: 403; "Access": a member reaches an item they created or one granted on it or a folder
 *   above it) and "Every row carries account_id. Nothing is ever read across accounts".
 * - docs/decisions.md (an embed token on the platform API: 403; revoke by another account's admin: 204 that
 *   revokes nothing; the console session of an admin mints sessions like its API key).
 *
 * One decision of this file where neither document says it in so many words: a member's API key (or console
 * session) reads a dashboard, its widgets' data, an app's queries and AI answers about it only when the member can
 * access the dashboard's workbook (DESIGN "Access"); otherwise 403 (SPEC B rule 10: resolves but not readable).
 */

const TOKEN_TTL_MS = 24 * 3_600_000;
const BASE_CLOCK = Date.parse('2026-06-01T12:00:00.000Z');

/** No cell may meet a rate limit: every limit is raised, whatever limits the app grows. */
const NO_LIMITS = Object.fromEntries(Object.entries(loadConfig({}).rateLimits).map(([name, value]) => [name, name === 'windowMs' ? value : 1_000_000])) as unknown as RateLimits;

type Status = 200 | 201 | 202 | 204 | 400 | 401 | 403 | 404;
/** One status per credential kind, in the order of CREDENTIALS. */
type Row = readonly [Status, Status, Status, Status, Status, Status, Status, Status, Status, Status, Status, Status, Status];

/**
 * THE MATRIX: operation (operationId, or "METHOD path" for the operations that have none) -> resource kind ->
 * the expected status for each credential kind, in this column order:
 *
 *   none  admin  memG  memU  othA  eOwn  eTen  eAcc  eDep  eInt  cons  revk  expd
 *
 * none: no credential. admin: API key of account A's admin. memG / memU: API key of a member of A with / without a
 * grant on the resource (mona is granted folder F of A's prod deployment; nick is granted nothing). othA: API key
 * of account B's admin. eOwn: embed token of A's tenant `shared`, prod deployment (the owner viewer). eTen: A's
 * other tenant `second`, prod (same externalId). eAcc: account B's tenant also named `shared` (same externalId).
 * eDep: the owner's embed user, session minted for A's stage deployment. eInt: an internalId session (mona, prod).
 * cons: alice's console session cookie (+ X-Requested-With: svc). revk / expd: the owner's embed user's token,
 * revoked / past its expiry.
 *
 * Resources: aProd / aWrite / aApp are published, embeddable dashboards of A's prod deployment, inside folder F;
 * aEdit is one in folder Editable, where mona's grant is an editor's (issue 33);
 * aStage is one of A's stage deployment; bProd / bApp are account B's. sharedRoot / secondRoot are thread roots of
 * A's tenants `shared` and `second`, written on aWrite; "Via" names the dashboard in the path when it is another.
 */
const EXPECTED = {
  //                                      none admin memG memU othA eOwn eTen eAcc eDep eInt cons revk expd
  checkLiveness: {
    process:                               [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  },
  checkReadiness: {
    database:                              [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  },
  login: {
    bystanderPassword:                     [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  },
  logout: {
    callerCookie:                          [204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204, 204],
  },
  // Issue 34: who is calling, for the console's top bar: every platform credential, never an embed token.
  getMe: {
    caller:                                [401, 200, 200, 200, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  generateEmbedSession: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  exchangeEmbedSession: {
    aSessionId:                            [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  },
  revokeEmbedSession: {
    externalIdInBothAccounts:              [401, 204, 403, 403, 204, 403, 403, 403, 403, 403, 204, 401, 401],
    aSessionId:                            [401, 204, 403, 403, 204, 403, 403, 403, 403, 403, 204, 401, 401],
  },
  currentEmbedSession: {
    callerSession:                         [200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200],
  },
  listEmbedUsers: {
    allTenants:                            [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
    sharedTenantName:                      [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  deleteEmbedUser: {
    aEmbedUser:                            [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bEmbedUser:                            [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getEmbedDashboard: {
    aProd:                                 [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    aStage:                                [401, 200, 403, 403, 404, 403, 403, 404, 200, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
  },
  getEmbedWorkbookDashboard: {
    aProd:                                 [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    aStage:                                [401, 200, 403, 403, 404, 403, 403, 404, 200, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
  },
  listDashboardComments: {
    aProd:                                 [401, 403, 403, 403, 403, 200, 200, 404, 403, 403, 403, 401, 401],
    aStage:                                [401, 403, 403, 403, 403, 403, 403, 404, 200, 403, 403, 401, 401],
    bProd:                                 [401, 403, 403, 403, 403, 404, 404, 200, 404, 403, 403, 401, 401],
  },
  streamDashboardComments: {
    aProd:                                 [401, 403, 403, 403, 403, 200, 200, 404, 403, 403, 403, 401, 401],
    aStage:                                [401, 403, 403, 403, 403, 403, 403, 404, 200, 403, 403, 401, 401],
    bProd:                                 [401, 403, 403, 403, 403, 404, 404, 200, 404, 403, 403, 401, 401],
  },
  postDashboardComment: {
    newThreadOnAProd:                      [401, 403, 403, 403, 403, 201, 201, 404, 403, 403, 403, 401, 401],
    replyToSharedRoot:                     [401, 403, 403, 403, 403, 201, 404, 404, 403, 403, 403, 401, 401],
    replyToSharedRootViaBProd:             [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  listMentionableUsers: {
    aProd:                                 [401, 403, 403, 403, 403, 200, 200, 404, 403, 403, 403, 401, 401],
    aStage:                                [401, 403, 403, 403, 403, 403, 403, 404, 200, 403, 403, 401, 401],
    bProd:                                 [401, 403, 403, 403, 403, 404, 404, 200, 404, 403, 403, 401, 401],
  },
  editDashboardComment: {
    sharedRoot:                            [401, 403, 403, 403, 403, 200, 404, 404, 403, 403, 403, 401, 401],
    secondRoot:                            [401, 403, 403, 403, 403, 404, 200, 404, 403, 403, 403, 401, 401],
    sharedRootViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedRootViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  deleteDashboardComment: {
    sharedRoot:                            [401, 403, 403, 403, 403, 204, 404, 404, 403, 403, 403, 401, 401],
    secondRoot:                            [401, 403, 403, 403, 403, 404, 204, 404, 403, 403, 403, 401, 401],
    sharedRootViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedRootViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  resolveDashboardThread: {
    sharedRoot:                            [401, 403, 403, 403, 403, 200, 404, 404, 403, 403, 403, 401, 401],
    secondRoot:                            [401, 403, 403, 403, 403, 404, 200, 404, 403, 403, 403, 401, 401],
    sharedRootViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedRootViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  workspaceObjects: {
    aProdRoot:                             [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aProdFolder:                           [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aStageRoot:                            [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProdRoot:                             [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aFolderViaBDeployment:                 [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  recordWorkspaceItemView: {
    aGrantedWorkbook:                      [401, 204, 204, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    aPrivateWorkbook:                      [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bWorkbook:                             [401, 404, 404, 404, 204, 403, 403, 403, 403, 403, 404, 401, 401],
    aWorkbookViaBDeployment:               [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  favoriteWorkspaceItem: {
    aGrantedWorkbook:                      [401, 204, 204, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    aPrivateWorkbook:                      [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bWorkbook:                             [401, 404, 404, 404, 204, 403, 403, 403, 403, 403, 404, 401, 401],
    aWorkbookViaBDeployment:               [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  unfavoriteWorkspaceItem: {
    aGrantedWorkbook:                      [401, 204, 204, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    aPrivateWorkbook:                      [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bWorkbook:                             [401, 404, 404, 404, 204, 403, 403, 403, 403, 403, 404, 401, 401],
    aWorkbookViaBDeployment:               [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getWidgetData: {
    aProd:                                 [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    aStage:                                [401, 200, 403, 403, 404, 403, 403, 404, 200, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
  },
  checkDashboardFilters: {
    aProd:                                 [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    aStage:                                [401, 200, 403, 403, 404, 403, 403, 404, 200, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
  },
  runAppQuery: {
    aApp:                                  [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    bApp:                                  [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
  },
  askQuestion: {
    aProd:                                 [401, 200, 200, 403, 404, 200, 200, 404, 403, 200, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 404, 404, 200, 404, 404, 404, 401, 401],
    sessionDeployment:                     [401, 400, 400, 400, 400, 200, 200, 200, 200, 200, 400, 401, 401],
  },
  createWebhookEndpoint: {
    callerAccount:                         [401, 201, 403, 403, 201, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  listWebhookEndpoints: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  getWebhookEndpoint: {
    aEndpoint:                             [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bEndpoint:                             [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  updateWebhookEndpoint: {
    aEndpoint:                             [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bEndpoint:                             [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  deleteWebhookEndpoint: {
    aEndpoint:                             [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bEndpoint:                             [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  listWebhookDeliveries: {
    aEndpoint:                             [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bEndpoint:                             [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getWebhookDelivery: {
    aDelivery:                             [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bDelivery:                             [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  replayWebhookDelivery: {
    aDelivery:                             [401, 202, 403, 403, 404, 403, 403, 403, 403, 403, 202, 401, 401],
    bDelivery:                             [401, 404, 403, 403, 202, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  listDeployments: {
    callerAccount:                         [401, 200, 200, 200, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  getDeployment: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getDeploymentMeta: {
    aProd:                                 [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  replaceDeploymentModel: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 34, the model page: the pre-aggregations' build status is the admins', as the model itself.
  listPreAggregations: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  checkDeploymentModel: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  previewQuery: {
    aProd:                                 [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 36: Cube's REST API reads the deployment an embed token's session is on, or the one a platform user names
  // (x-svc-deployment-id); no console cookie (Cube's clients send a token); another account's deployment is a 404.
  cubeLoad: {
    aProd:                                 [401, 200, 200, 200, 404, 200, 200, 403, 403, 200, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 200, 403, 403, 401, 401, 401],
  },
  cubeLoadPost: {
    aProd:                                 [401, 200, 200, 200, 404, 200, 200, 403, 403, 200, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 200, 403, 403, 401, 401, 401],
  },
  // Cube's `sql` is for admins (the statement names every table and column); `dry-run` for every caller, as `load`.
  cubeSql: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 401, 401, 401],
  },
  cubeSqlPost: {
    aProd:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 401, 401, 401],
  },
  cubeDryRun: {
    aProd:                                 [401, 200, 200, 200, 404, 200, 200, 403, 403, 200, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 200, 403, 403, 401, 401, 401],
  },
  cubeDryRunPost: {
    aProd:                                 [401, 200, 200, 200, 404, 200, 200, 403, 403, 200, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 200, 403, 403, 401, 401, 401],
  },
  cubeMeta: {
    aProd:                                 [401, 200, 200, 200, 404, 200, 200, 403, 403, 200, 401, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 200, 403, 403, 401, 401, 401],
  },
  listAuditEvents: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  createDashboard: {
    aProd:                                 [401, 201, 201, 201, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    bProd:                                 [401, 404, 404, 404, 201, 403, 403, 403, 403, 403, 404, 401, 401],
    aViewerFolder:                         [401, 201, 403, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    aEditorFolder:                         [401, 201, 201, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    // Issue 34, a copy (copyOf aProd): who reads the source copies it to the root; another account's source is a 404.
    aCopyOfAProd:                          [401, 201, 201, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    bCopyOfAProd:                          [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 34 part 4, View as a customer: an admin of the dashboard's account (key or console) mints a preview session;
  // a member is refused before the dashboard is looked up, another account's dashboard does not resolve.
  createPreviewSession: {
    aProd:                                 [401, 201, 403, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    bProd:                                 [401, 404, 403, 403, 201, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getAuthoredDashboard: {
    aProd:                                 [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  replaceDashboardDraft: {
    aWrite:                                [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aEdit:                                 [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  publishDashboard: {
    aWrite:                                [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aEdit:                                 [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  listDashboardVersions: {
    aProd:                                 [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  restoreDashboardVersion: {
    aWrite:                                [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProd:                                 [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aEdit:                                 [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  archiveDashboard: {
    aFresh:                                [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bFresh:                                [401, 404, 404, 404, 204, 403, 403, 403, 403, 403, 404, 401, 401],
    aFreshInEditable:                      [401, 204, 204, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
  },
  // Issue 33, editor grants. memG is mona: a viewer on folder F, an editor on folder Editable (aEdit's). She changes
  // what is below her editor grant, and only reads what is below her viewer grant; creating in a folder is changing it.
  listItemGrants: {
    aFolder:                               [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bWorkbook:                             [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aFolderViaBDeployment:                 [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  replaceItemGrants: {
    aFolder:                               [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bWorkbook:                             [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aFolderViaBDeployment:                 [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 34, folders: creating in a folder, renaming or moving an item is changing it (issue 33's edit rule); the
  // root is every member's. Each cell's item is made for it by its account's admin (in Editable: mona's editor grant;
  // in F: her viewer grant).
  createWorkspaceFolder: {
    aRoot:                                 [401, 201, 201, 201, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    bRoot:                                 [401, 404, 404, 404, 201, 403, 403, 403, 403, 403, 404, 401, 401],
    aViewerFolder:                         [401, 201, 403, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    aEditorFolder:                         [401, 201, 201, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  updateWorkspaceItem: {
    aRootRename:                           [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aEditableRename:                       [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aViewerRename:                         [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aEditableToRoot:                       [401, 200, 200, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    aEditableToViewer:                     [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bRename:                               [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aItemViaBDeployment:                   [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 34: what the caller may do with listed items; an item the caller cannot access is left out (as the listing does).
  workspacePermissions: {
    aProdFolder:                           [401, 200, 200, 200, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bProdRoot:                             [401, 404, 404, 404, 200, 403, 403, 403, 403, 403, 404, 401, 401],
    aFolderViaBDeployment:                 [401, 404, 404, 404, 404, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  listUsers: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  createUser: {
    callerAccount:                         [401, 201, 403, 403, 201, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  getUser: {
    aUser:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bUser:                                 [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  updateUser: {
    aUser:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bUser:                                 [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  deleteUser: {
    aUser:                                 [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bUser:                                 [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  listApiKeys: {
    aUser:                                 [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bUser:                                 [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  createApiKey: {
    aUser:                                 [401, 201, 403, 403, 404, 403, 403, 403, 403, 403, 201, 401, 401],
    bUser:                                 [401, 404, 403, 403, 201, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  deleteApiKey: {
    aKey:                                  [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bKey:                                  [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  listGroups: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  createGroup: {
    callerAccount:                         [401, 201, 403, 403, 201, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  getGroup: {
    aGroup:                                [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bGroup:                                [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  updateGroup: {
    aGroup:                                [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bGroup:                                [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  deleteGroup: {
    aGroup:                                [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bGroup:                                [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  getAccountSettings: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  updateAccountSettings: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  listEmbedTenants: {
    callerAccount:                         [401, 200, 403, 403, 200, 403, 403, 403, 403, 403, 200, 401, 401],
  },
  createEmbedTenant: {
    callerAccount:                         [401, 201, 403, 403, 201, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  getEmbedTenant: {
    aTenant:                               [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bTenant:                               [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  updateEmbedTenant: {
    aTenant:                               [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bTenant:                               [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  deleteEmbedTenant: {
    aTenant:                               [401, 204, 403, 403, 404, 403, 403, 403, 403, 403, 204, 401, 401],
    bTenant:                               [401, 404, 403, 403, 204, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  createEmbedUser: {
    callerAccount:                         [401, 201, 403, 403, 201, 403, 403, 403, 403, 403, 201, 401, 401],
  },
  getEmbedUser: {
    aEmbedUser:                            [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bEmbedUser:                            [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  updateEmbedUser: {
    aEmbedUser:                            [401, 200, 403, 403, 404, 403, 403, 403, 403, 403, 200, 401, 401],
    bEmbedUser:                            [401, 404, 403, 403, 200, 403, 403, 403, 403, 403, 404, 401, 401],
  },
  // Issue 35 saved charts and views: embed viewers of an embed tenant only (the comments' credential rule), every
  // embed session minted with settings.explore create; a chart lives on its session's deployment, a view on its
  // dashboard; another tenant's, deployment's or account's id is a 404 (views: the dashboard's own 404/403 first).
  listSavedCharts: {
    callerScope:                           [401, 403, 403, 403, 403, 200, 200, 200, 200, 403, 403, 401, 401],
  },
  createSavedChart: {
    callerScope:                           [401, 403, 403, 403, 403, 201, 201, 201, 201, 403, 403, 401, 401],
  },
  getSavedChart: {
    ownerShared:                           [401, 403, 403, 403, 403, 200, 404, 404, 404, 403, 403, 401, 401],
    ownerPrivate:                          [401, 403, 403, 403, 403, 200, 404, 404, 404, 403, 403, 401, 401],
    secondShared:                          [401, 403, 403, 403, 403, 404, 200, 404, 404, 403, 403, 401, 401],
  },
  updateSavedChart: {
    ownerShared:                           [401, 403, 403, 403, 403, 200, 404, 404, 404, 403, 403, 401, 401],
    secondShared:                          [401, 403, 403, 403, 403, 404, 200, 404, 404, 403, 403, 401, 401],
  },
  deleteSavedChart: {
    ownerShared:                           [401, 403, 403, 403, 403, 204, 404, 404, 404, 403, 403, 401, 401],
    secondShared:                          [401, 403, 403, 403, 403, 404, 204, 404, 404, 403, 403, 401, 401],
  },
  listSavedViews: {
    aProd:                                 [401, 403, 403, 403, 403, 200, 200, 404, 403, 403, 403, 401, 401],
    aStage:                                [401, 403, 403, 403, 403, 403, 403, 404, 200, 403, 403, 401, 401],
    bProd:                                 [401, 403, 403, 403, 403, 404, 404, 200, 404, 403, 403, 401, 401],
  },
  createSavedView: {
    aProd:                                 [401, 403, 403, 403, 403, 201, 201, 404, 403, 403, 403, 401, 401],
    bProd:                                 [401, 403, 403, 403, 403, 404, 404, 201, 404, 403, 403, 401, 401],
  },
  getSavedView: {
    sharedView:                            [401, 403, 403, 403, 403, 200, 404, 404, 403, 403, 403, 401, 401],
    secondView:                            [401, 403, 403, 403, 403, 404, 200, 404, 403, 403, 403, 401, 401],
    sharedViewViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedViewViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  updateSavedView: {
    sharedView:                            [401, 403, 403, 403, 403, 200, 404, 404, 403, 403, 403, 401, 401],
    secondView:                            [401, 403, 403, 403, 403, 404, 200, 404, 403, 403, 403, 401, 401],
    sharedViewViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedViewViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
  deleteSavedView: {
    sharedView:                            [401, 403, 403, 403, 403, 204, 404, 404, 403, 403, 403, 401, 401],
    secondView:                            [401, 403, 403, 403, 403, 404, 204, 404, 403, 403, 403, 401, 401],
    sharedViewViaAStage:                   [401, 403, 403, 403, 403, 403, 403, 404, 404, 403, 403, 401, 401],
    sharedViewViaBProd:                    [401, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 401, 401],
  },
} as const satisfies Record<string, Record<string, Row>>;

/**
 * Who may be shown each marker group at all, whatever the request (a variant can hide more, see `hidden`). A marker
 * in any answer to a credential not listed here is a leak.
 */
const VISIBILITY: Record<MarkerGroup, readonly Credential[]> = {
  aPlatformUsers: ['adminKey', 'memberGranted', 'memberUngranted', 'consoleSession'],
  aGrantedItems: ['adminKey', 'memberGranted', 'consoleSession'],
  aPrivateItem: ['adminKey', 'consoleSession'],
  aNickItem: ['adminKey', 'memberUngranted', 'consoleSession'],
  aProdDashboards: ['adminKey', 'memberGranted', 'consoleSession', 'embedOwner', 'embedOtherTenant', 'embedInternalId'],
  aStageItems: ['adminKey', 'consoleSession'],
  aStageDashboards: ['adminKey', 'consoleSession', 'embedOtherDeployment'],
  aTenantShared: ['adminKey', 'consoleSession', 'embedOwner', 'embedOtherDeployment'],
  aTenantSecond: ['adminKey', 'consoleSession', 'embedOtherTenant'],
  bPlatform: ['otherAccountAdminKey'],
  bDashboards: ['otherAccountAdminKey', 'embedOtherAccount'],
  bTenantShared: ['otherAccountAdminKey', 'embedOtherAccount'],
};

type Expected = typeof EXPECTED;
type OperationKey = keyof Expected;

/** One request of a cell, built for its credential, and how to check what it did. */
interface Prepared {
  url: string;
  payload?: Record<string, unknown>;
  /** Headers added to (or replacing) the credential's own. */
  headers?: Record<string, string>;
  /** Checks the effect of a write: made on 2xx, nothing changed otherwise (re-read with the owner's credential). */
  check?: (res: LightMyRequestResponse) => Promise<void>;
}

interface Variant {
  prepare(credential: Credential): Promise<Prepared>;
  /** Markers a 2xx answer must carry (all 2xx cells of the variant, or per credential), so the leak check is not vacuous. */
  mustSee?: readonly MarkerKey[] | Partial<Record<Credential, readonly MarkerKey[]>>;
  /** Markers no answer of this variant may carry, even to a credential that may see them elsewhere. */
  hidden?: readonly MarkerKey[];
  /**
   * Markers this variant may show beyond VISIBILITY, by credential: the authors' preview runs a member's query on
   * the deployment's model under its access policies, which the marker views do not restrict (docs/authoring.md).
   */
  alsoVisible?: Partial<Record<Credential, readonly MarkerKey[]>>;
}

type Operations = { [K in OperationKey]: { [V in keyof Expected[K]]: Variant } };

const ALL_MARKERS = Object.keys(MARKER_GROUPS) as MarkerKey[];
const PLATFORM_CALLERS: Partial<Record<Credential, { account: 'a' | 'b'; user: 'alice' | 'mona' | 'nick' | 'admin' }>> = {
  adminKey: { account: 'a', user: 'alice' },
  memberGranted: { account: 'a', user: 'mona' },
  memberUngranted: { account: 'a', user: 'nick' },
  otherAccountAdminKey: { account: 'b', user: 'admin' },
  consoleSession: { account: 'a', user: 'alice' },
};
/** The markers a 2xx answer of `variant` to `credential` must carry. */
function mustSeeOf(variant: Variant, credential: Credential): readonly MarkerKey[] {
  const { mustSee } = variant;
  if (mustSee === undefined) return [];
  if (isMarkerList(mustSee)) return mustSee;
  return mustSee[credential] ?? [];
}
const isMarkerList = (value: NonNullable<Variant['mustSee']>): value is readonly MarkerKey[] => Array.isArray(value);
const isSuccess = (res: LightMyRequestResponse) => res.statusCode >= 200 && res.statusCode < 300;

/** The OpenAPI path template as a pattern for concrete paths. */
const pathPattern = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);

describeEachDialect('isolation matrix (issue 8)', (t) => {
  let clock = BASE_CLOCK;
  let app: FastifyInstance;
  let fake: FakeAi;
  let w: IsolationWorld;
  let operations: Operations;
  let documented: Map<string, { method: string; path: RegExp; streams: boolean }>;
  let counter = 0;
  let cellsRun = 0;
  const shown = new Set<MarkerKey>();
  const unique = (what: string) => `${what}-${w.suffix}-${++counter}`;

  beforeAll(async () => {
    fake = await startFakeAi();
    fake.respond = () => ({ status: 200, body: toolCallReply(MARKER_QUERY) });
    app = await buildApp(testConfig({
      rateLimits: NO_LIMITS,
      embedLifetimes: { sessionTtlMs: 5 * 60_000, tokenTtlMs: TOKEN_TTL_MS },
      ai: { baseUrl: fake.baseUrl, apiKey: 'fake-ai-key' },
    }), { db: t().db, now: () => new Date(clock) });
    w = await seedIsolationWorld(app, t().db.kysely, {
      warehousePath: inject('demoWarehousePath'),
      tokenTtlMs: TOKEN_TTL_MS,
      travel: async (ms, fn) => {
        clock += ms;
        try {
          return await fn();
        } finally {
          clock -= ms;
        }
      },
    });
    type Documented = { operationId?: string; responses?: Record<string, { content?: Record<string, unknown> }> };
    const document = (await app.inject({ url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, Documented>> };
    documented = new Map();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const streams = operation.responses?.['200']?.content?.['text/event-stream'] !== undefined;
        documented.set(operation.operationId ?? `${method.toUpperCase()} ${path}`, { method: method.toUpperCase(), path: pathPattern(path), streams });
      }
    }
    operations = describeOperations();
  });

  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  // ---- reading back, with the owner's credentials ----

  const sessionOf = async (headers: Record<string, string>) => (await app.inject({ url: '/api/v1/embed/session', headers })).json().session as Record<string, unknown> | null;
  const isAlive = async (session: MintedSession) => (await sessionOf(session.headers)) !== null;
  const embedUsersOf = async (account: 'a' | 'b') => {
    const res = await app.inject({ url: '/api/v1/embed/users', headers: { authorization: `Bearer ${account === 'a' ? w.a.keys.alice : w.b.keys.admin}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().users as Array<{ id: number; externalId: string }>;
  };
  interface ThreadJson { root: { id: number; body: string }; resolvedAt?: string | null }
  const threadsOf = async (session: MintedSession, publicId: string) => {
    const res = await app.inject({ url: `/api/v1/embed/dashboard/${publicId}/comments?includeResolved=true&first=200`, headers: session.headers });
    expect(res.statusCode, res.body).toBe(200);
    return { text: res.body, items: res.json().items as ThreadJson[] };
  };
  const postRoot = async (session: MintedSession, publicId: string, body: string) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: session.headers, payload: { body } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const listingStatus = async (cookie: string) => (await app.inject({ url: `/api/v1/deployments/${w.a.refs.prod}/workspace`, headers: { cookie } })).statusCode;
  const userIdOf = (credential: Credential) => {
    const caller = PLATFORM_CALLERS[credential];
    return caller === undefined ? undefined : (caller.account === 'a' ? w.a : w.b).refs[caller.user];
  };

  // ---- the operations, one request builder per resource kind ----

  function describeOperations(): Operations {
    const { a, b, publicIds, sessions } = w;
    const prodA = a.refs.prod!;
    const dashboardReads = (url: (target: { publicId: string; deploymentId: number; workbookId: number }) => string, payload?: Record<string, unknown>) => {
      const targets = {
        aProd: { publicId: publicIds.aProd, deploymentId: prodA, workbookId: a.refs.wbProd!, title: 'aProdDashTitle' as const, data: 'aProdData' as const },
        aStage: { publicId: publicIds.aStage, deploymentId: a.refs.stage!, workbookId: a.refs.wbStage!, title: 'aStageDashTitle' as const, data: 'aStageData' as const },
        bProd: { publicId: publicIds.bProd, deploymentId: b.refs.prod!, workbookId: b.refs.wbB!, title: 'bDashTitle' as const, data: 'bData' as const },
      };
      const variant = (target: (typeof targets)[keyof typeof targets], hidden: MarkerKey[]): Variant => ({
        prepare: async () => ({ url: url(target), ...(payload !== undefined && { payload }) }),
        mustSee: [payload === undefined ? target.title : target.data],
        hidden,
      });
      return {
        aProd: variant(targets.aProd, ['aStageDashTitle', 'aStageData', 'aWriteDashTitle', 'aAppDashTitle']),
        aStage: variant(targets.aStage, ['aProdDashTitle', 'aProdData']),
        bProd: variant(targets.bProd, []),
      };
    };

    /** A fresh thread root of the owner (or of the other tenant's viewer) on aWrite, addressed through `pathPublicId`. */
    const commentWrite = (
      author: 'owner' | 'otherTenant', pathPublicId: string, verb: { suffix: string; payload?: (n: string) => Record<string, unknown> },
      effect: (thread: ThreadJson | undefined, made: boolean, original: string) => void,
    ): Variant => ({
      prepare: async () => {
        const n = unique('target');
        const id = await postRoot(sessions[author], publicIds.aWrite, n);
        return {
          url: `/api/v1/embed/dashboard/${pathPublicId}/comments/${id}${verb.suffix}`,
          ...(verb.payload !== undefined && { payload: verb.payload(n) }),
          check: async (res) => {
            const { items } = await threadsOf(sessions[author], publicIds.aWrite);
            effect(items.find((thread) => thread.root.id === id), isSuccess(res), n);
          },
        };
      },
    });
    const commentWrites = (verb: { suffix: string; payload?: (n: string) => Record<string, unknown> }, effect: (thread: ThreadJson | undefined, made: boolean, original: string) => void) => ({
      sharedRoot: commentWrite('owner', publicIds.aWrite, verb, effect),
      secondRoot: commentWrite('otherTenant', publicIds.aWrite, verb, effect),
      sharedRootViaAStage: commentWrite('owner', publicIds.aStage, verb, effect),
      sharedRootViaBProd: commentWrite('owner', publicIds.bProd, verb, effect),
    });

    /** A post's body is seen by the poster's own tenant on that dashboard, and by nobody anywhere else. */
    const commentPost = (pathPublicId: string, parentId: number | undefined): Variant => ({
      prepare: async (credential) => {
        const body = unique('post');
        return {
          url: `/api/v1/embed/dashboard/${pathPublicId}/comments`,
          payload: parentId === undefined ? { body } : { body, parentId },
          check: async (res) => {
            const readers = { embedOwner: [sessions.owner, publicIds.aProd], embedOtherTenant: [sessions.otherTenant, publicIds.aProd], embedOtherAccount: [sessions.otherAccount, publicIds.bProd], embedOtherDeployment: [sessions.otherDeployment, publicIds.aStage] } as const;
            for (const [reader, [session, publicId]] of Object.entries(readers)) {
              const { text } = await threadsOf(session, publicId);
              expect(text.includes(body), `${reader} reading ${publicId}`).toBe(res.statusCode === 201 && reader === credential);
            }
          },
        };
      },
    });

    /** Views and favorites: rows of everyone but the caller never move; the caller's move only on 2xx. */
    const itemWrite = (table: 'item_views' | 'item_favorites', made: (rows: string[], userId: number) => boolean, before?: (credential: Credential, url: string) => Promise<void>) => {
      const rowsOf = async (itemId: number) => {
        const rows = await t().db.kysely.selectFrom(table).selectAll().where('item_id', '=', itemId).execute();
        return rows.map((row) => `${row.user_id}|${'viewed_at' in row ? row.viewed_at : ''}`).sort();
      };
      const variant = (deploymentId: number, itemId: number): Variant => ({
        prepare: async (credential) => {
          const url = `/api/v1/deployments/${deploymentId}/workspace/${itemId}/${table === 'item_views' ? 'view' : 'favorite'}`;
          clock += 1000;
          await before?.(credential, url);
          const rowsBefore = await rowsOf(itemId);
          return {
            url,
            check: async (res) => {
              const rowsAfter = await rowsOf(itemId);
              const userId = userIdOf(credential);
              const others = (rows: string[]) => rows.filter((row) => userId === undefined || !row.startsWith(`${userId}|`));
              expect(others(rowsAfter), 'rows of other users').toEqual(others(rowsBefore));
              if (isSuccess(res)) expect(made(rowsAfter, userId!), 'the caller\'s own row').toBe(true);
              else expect(rowsAfter, 'a refused write changes nothing').toEqual(rowsBefore);
            },
          };
        },
      });
      return {
        aGrantedWorkbook: variant(prodA, a.refs.wbProd!),
        aPrivateWorkbook: variant(prodA, a.refs.private!),
        bWorkbook: variant(b.refs.prod!, b.refs.wbB!),
        aWorkbookViaBDeployment: variant(b.refs.prod!, a.refs.wbProd!),
      };
    };
    const nowIso = () => new Date(clock).toISOString();

    /** Generate Session for a deployment of `account`: an embed user appears in that account only, and only on 200. */
    const generateFor = (account: 'a' | 'b'): Variant => ({
      prepare: async () => {
        const externalId = unique('gen');
        return {
          url: '/api/v1/embed/generate-session',
          payload: { deploymentId: account === 'a' ? prodA : b.refs.prod, externalId, embedTenantName: w.tenants.shared },
          check: async (res) => {
            expect((await embedUsersOf('a')).some((u) => u.externalId === externalId), "an embed user in A's tenant").toBe(isSuccess(res) && account === 'a');
            expect((await embedUsersOf('b')).some((u) => u.externalId === externalId), "an embed user in B's tenant").toBe(isSuccess(res) && account === 'b');
          },
        };
      },
    });

    /** A fresh embed user of `account` to delete: listed by its admin, and its session alive, unless the answer was 204. */
    const deleteEmbedUserOf = (account: 'a' | 'b'): Variant => ({
      prepare: async () => {
        const victim = await w.mint(account, { deploymentId: account === 'a' ? prodA : b.refs.prod, externalId: unique('delete'), embedTenantName: w.tenants.shared });
        return {
          url: `/api/v1/embed/users/${victim.embedUserId}`,
          check: async (res) => {
            expect((await embedUsersOf(account)).some((u) => u.id === victim.embedUserId), 'the embed user is still listed').toBe(!isSuccess(res));
            expect(await isAlive(victim), "the embed user's session").toBe(!isSuccess(res));
          },
        };
      },
    });

    // ---- webhooks (issue 23): endpoints and deliveries of each account, made afresh for every cell ----
    const adminOf = (account: 'a' | 'b') => ({ authorization: `Bearer ${account === 'a' ? a.keys.alice : b.keys.admin}` });
    const hooks = '/api/v1/webhooks/endpoints';
    const newEndpoint = async (account: 'a' | 'b') => {
      const res = await app.inject({ method: 'POST', url: hooks, headers: adminOf(account), payload: { url: `https://93.184.215.14/${unique('hook')}`, eventTypes: ['comment.created'] } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: number; url: string };
    };
    // An account has at most 20 endpoints: every cell removes what it made.
    const dropEndpoint = async (account: 'a' | 'b', id: number) => {
      await app.inject({ method: 'DELETE', url: `${hooks}/${id}`, headers: adminOf(account) });
    };
    const endpointsOf = async (account: 'a' | 'b') =>
      (await app.inject({ url: hooks, headers: adminOf(account) })).json().items as Array<{ id: number; url: string; description: string | null }>;
    const endpointVariant = (account: 'a' | 'b', request: (endpoint: { id: number; url: string }) => Omit<Prepared, 'check'>, check?: (res: LightMyRequestResponse, endpoint: { id: number; url: string }) => Promise<void>): Variant => ({
      prepare: async () => {
        const endpoint = await newEndpoint(account);
        const prepared = request(endpoint);
        return { ...prepared, check: async (res) => {
          // The endpoint itself is in its reads and changes (a delivery log lists deliveries, none yet).
          if (isSuccess(res) && res.statusCode !== 204 && !prepared.url.endsWith('/deliveries')) expect(res.body).toContain(endpoint.url);
          await check?.(res, endpoint);
          await dropEndpoint(account, endpoint.id);
        } };
      },
    });
    const endpointVariants = (request: (endpoint: { id: number; url: string }) => Omit<Prepared, 'check'>, check?: (res: LightMyRequestResponse, endpoint: { id: number; url: string }, account: 'a' | 'b') => Promise<void>) => ({
      aEndpoint: endpointVariant('a', request, check === undefined ? undefined : (res, endpoint) => check(res, endpoint, 'a')),
      bEndpoint: endpointVariant('b', request, check === undefined ? undefined : (res, endpoint) => check(res, endpoint, 'b')),
    });
    /** An endpoint of `account` and one delivery of it (a comment posted in that account), failed when `failed`. */
    const deliveryVariant = (account: 'a' | 'b', suffix: string, failed: boolean, check?: (res: LightMyRequestResponse, deliveryId: number) => Promise<void>): Variant => ({
      prepare: async () => {
        const endpoint = await newEndpoint(account);
        await postRoot(account === 'a' ? sessions.owner : sessions.otherAccount, account === 'a' ? publicIds.aWrite : publicIds.bProd, unique('hooked'));
        const [delivery] = (await app.inject({ url: `${hooks}/${endpoint.id}/deliveries`, headers: adminOf(account) })).json().items as Array<{ id: number }>;
        if (failed) await t().db.kysely.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('id', '=', delivery!.id).execute();
        return {
          url: `${hooks}/${endpoint.id}/deliveries/${delivery!.id}${suffix}`,
          check: async (res) => {
            await check?.(res, delivery!.id);
            await dropEndpoint(account, endpoint.id);
          },
        };
      },
    });
    const webhookOperations = {
      createWebhookEndpoint: {
        callerAccount: {
          prepare: async (credential: Credential) => {
            const url = `https://93.184.215.14/${unique('created')}`;
            return {
              url: hooks, payload: { url, eventTypes: ['comment.created'] },
              check: async (res: LightMyRequestResponse) => {
                const account = PLATFORM_CALLERS[credential]?.account;
                expect((await endpointsOf('a')).some((e) => e.url === url), "an endpoint of A").toBe(isSuccess(res) && account === 'a');
                expect((await endpointsOf('b')).some((e) => e.url === url), "an endpoint of B").toBe(isSuccess(res) && account === 'b');
                for (const owner of ['a', 'b'] as const) {
                  for (const endpoint of (await endpointsOf(owner)).filter((e) => e.url === url)) await dropEndpoint(owner, endpoint.id);
                }
              },
            };
          },
        },
      },
      listWebhookEndpoints: {
        callerAccount: {
          prepare: async (credential: Credential) => {
            const [inA, inB] = [await newEndpoint('a'), await newEndpoint('b')];
            return {
              url: hooks,
              check: async (res: LightMyRequestResponse) => {
                const account = PLATFORM_CALLERS[credential]?.account;
                expect(res.body.includes(inA.url), "A's endpoint").toBe(isSuccess(res) && account === 'a');
                expect(res.body.includes(inB.url), "B's endpoint").toBe(isSuccess(res) && account === 'b');
                await dropEndpoint('a', inA.id);
                await dropEndpoint('b', inB.id);
              },
            };
          },
        },
      },
      getWebhookEndpoint: endpointVariants((endpoint) => ({ url: `${hooks}/${endpoint.id}` })),
      updateWebhookEndpoint: endpointVariants((endpoint) => ({ url: `${hooks}/${endpoint.id}`, payload: { description: `changed-${endpoint.id}` } }), async (res, endpoint, account) => {
        const found = (await endpointsOf(account)).find((e) => e.id === endpoint.id);
        expect(found?.description ?? null, 'the description').toBe(isSuccess(res) ? `changed-${endpoint.id}` : null);
      }),
      deleteWebhookEndpoint: endpointVariants((endpoint) => ({ url: `${hooks}/${endpoint.id}` }), async (res, endpoint, account) => {
        expect((await endpointsOf(account)).some((e) => e.id === endpoint.id), 'the endpoint is still there').toBe(!isSuccess(res));
      }),
      listWebhookDeliveries: endpointVariants((endpoint) => ({ url: `${hooks}/${endpoint.id}/deliveries` })),
      getWebhookDelivery: { aDelivery: deliveryVariant('a', '', false), bDelivery: deliveryVariant('b', '', false) },
      replayWebhookDelivery: {
        aDelivery: deliveryVariant('a', '/replay', true, async (res, id) => {
          const row = await t().db.kysely.selectFrom('webhook_deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow();
          expect(row.status, 'the delivery').toBe(isSuccess(res) ? 'pending' : 'failed');
        }),
        bDelivery: deliveryVariant('b', '/replay', true, async (res, id) => {
          const row = await t().db.kysely.selectFrom('webhook_deliveries').select('status').where('id', '=', id).executeTakeFirstOrThrow();
          expect(row.status, 'the delivery').toBe(isSuccess(res) ? 'pending' : 'failed');
        }),
      },
    };

    // ---- the authoring API (issue 33): deployments, their models and the audit log ----
    const deploymentOf = (account: 'a' | 'b') => (account === 'a' ? prodA : b.refs.prod!);
    const revisionOf = async (account: 'a' | 'b') =>
      (await t().db.kysely.selectFrom('deployments').select('model_revision').where('id', '=', deploymentOf(account)).executeTakeFirstOrThrow()).model_revision;
    const deploymentVariant = (account: 'a' | 'b', suffix: string, mustSee: readonly MarkerKey[]): Variant => ({
      prepare: async () => ({ url: `/api/v1/deployments/${deploymentOf(account)}${suffix}` }),
      mustSee,
    });
    /** The model put back as it is (If-Match: *): a 2xx raises its revision, and a refusal leaves it. */
    const modelVariant = (account: 'a' | 'b'): Variant => ({
      prepare: async () => {
        const before = await revisionOf(account);
        const current = (await app.inject({ url: `/api/v1/deployments/${deploymentOf(account)}`, headers: adminOf(account) })).json() as { semanticViews: unknown[] };
        return {
          url: `/api/v1/deployments/${deploymentOf(account)}/model`, headers: { 'if-match': '*' }, payload: { semanticViews: current.semanticViews },
          check: async (res) => expect(await revisionOf(account), 'the model revision').toBe(isSuccess(res) ? before + 1 : before),
        };
      },
      mustSee: [account === 'a' ? 'aProdData' : 'bData'],
    });
    /** The model as it is, checked: never a write, whoever asks. */
    const modelCheckVariant = (account: 'a' | 'b'): Variant => ({
      prepare: async () => {
        const before = await revisionOf(account);
        const current = (await app.inject({ url: `/api/v1/deployments/${deploymentOf(account)}`, headers: adminOf(account) })).json() as { semanticViews: unknown[] };
        return {
          url: `/api/v1/deployments/${deploymentOf(account)}/model/check`, payload: { semanticViews: current.semanticViews },
          check: async () => expect(await revisionOf(account), 'the model revision').toBe(before),
        };
      },
      mustSee: [],
    });
    // Dashboards through the API: a draft of the dashboard's own content (so nothing a viewer reads changes), over
    // its current revision; publishes and restores of such drafts; archives of dashboards made for the cell.
    const authored = (account: 'a' | 'b', publicId: string) => app.inject({ url: `/api/v1/dashboards/${publicId}`, headers: adminOf(account) }).then((res) => res.json() as {
      draftRevision: number; status: string; published: { versionNumber: number; title: string | null; description: string | null; config: Record<string, unknown>; allowEmbed: boolean; reportSnapshots: Array<Record<string, unknown>> };
    });
    const sameDraft = (published: Awaited<ReturnType<typeof authored>>['published']) => ({
      title: published.title, description: published.description, allowEmbed: published.allowEmbed, config: published.config,
      reportSnapshots: published.reportSnapshots.map(({ id: _id, versionNumber: _v, ...rest }) => Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null))),
    });
    const writeTarget = (account: 'a' | 'b', target?: string) => target ?? (account === 'a' ? publicIds.aWrite : publicIds.bProd);
    const draftVariant = (account: 'a' | 'b', target?: string): Variant => ({
      prepare: async () => {
        const before = await authored(account, writeTarget(account, target));
        return {
          url: `/api/v1/dashboards/${writeTarget(account, target)}/draft`, headers: { 'if-match': `"draft-${before.draftRevision}"` }, payload: sameDraft(before.published),
          check: async (res) => expect((await authored(account, writeTarget(account, target))).draftRevision, 'the draft revision').toBe(isSuccess(res) ? before.draftRevision + 1 : before.draftRevision),
        };
      },
    });
    /** A draft of the same content is saved by the account's admin first; the cell publishes it, or restores version 1. */
    const versionVariant = (account: 'a' | 'b', suffix: string, published: boolean, target?: string): Variant => ({
      prepare: async () => {
        const before = await authored(account, writeTarget(account, target));
        if (published) {
          const saved = await app.inject({ method: 'PUT', url: `/api/v1/dashboards/${writeTarget(account, target)}/draft`, headers: { ...adminOf(account), 'if-match': `"draft-${before.draftRevision}"` }, payload: sameDraft(before.published) });
          expect(saved.statusCode, saved.body).toBe(200);
        }
        return {
          url: `/api/v1/dashboards/${writeTarget(account, target)}${suffix}`,
          check: async (res) => {
            const after = await authored(account, writeTarget(account, target));
            if (published) expect(after.published.versionNumber, 'the published version').toBe(isSuccess(res) ? before.published.versionNumber + 1 : before.published.versionNumber);
            else expect(after.draftRevision, 'the draft revision').toBe(isSuccess(res) ? before.draftRevision + 1 : before.draftRevision);
          },
        };
      },
    });
    const createVariant = (account: 'a' | 'b', folderId?: number, copyOf?: string): Variant => ({
      prepare: async () => {
        const publicId = unique('made');
        return {
          url: `/api/v1/deployments/${deploymentOf(account)}/dashboards`,
          payload: { publicId, title: publicId, ...(copyOf === undefined ? { config: { widgets: [] } } : { copyOf }), ...(folderId === undefined ? {} : { folderId }) },
          check: async (res) => {
            const found = await t().db.kysely.selectFrom('dashboards').select('deployment_id').where('public_id', '=', publicId).executeTakeFirst();
            expect(found?.deployment_id, 'the dashboard made').toBe(isSuccess(res) ? deploymentOf(account) : undefined);
          },
        };
      },
    });
    const archiveVariant = (account: 'a' | 'b', folderId?: number): Variant => ({
      prepare: async () => {
        const publicId = unique('archive');
        const made = await app.inject({ method: 'POST', url: `/api/v1/deployments/${deploymentOf(account)}/dashboards`, headers: adminOf(account), payload: { publicId, title: publicId, config: { widgets: [] }, ...(folderId === undefined ? {} : { folderId }) } });
        expect(made.statusCode, made.body).toBe(201);
        return {
          url: `/api/v1/dashboards/${publicId}`,
          check: async (res) => expect((await authored(account, publicId)).status, 'the dashboard').toBe(isSuccess(res) ? 'archived' : 'draft'),
        };
      },
    });
    const readVariant = (target: 'aProd' | 'bProd', suffix: string, title: MarkerKey): Variant => ({
      prepare: async () => ({ url: `/api/v1/dashboards/${publicIds[target]}${suffix}` }),
      mustSee: suffix === '' ? [title] : [],
    });
    // A preview session is a row of embed_sessions marked `preview`: one more on a 2xx, none on a refusal.
    const previewRows = async () => (await t().db.kysely.selectFrom('embed_sessions').select('id').where('preview', 'is not', null).execute()).length;
    const previewVariant = (target: 'aProd' | 'bProd'): Variant => ({
      prepare: async () => {
        const before = await previewRows();
        return {
          url: `/api/v1/dashboards/${publicIds[target]}/preview-sessions`,
          payload: { securityContext: { tenant: 'customer-a' } },
          check: async (res) => expect(await previewRows(), 'the preview sessions').toBe(isSuccess(res) ? before + 1 : before),
        };
      },
    });
    const dashboardAuthoring = {
      createPreviewSession: { aProd: previewVariant('aProd'), bProd: previewVariant('bProd') },
      createDashboard: { aProd: createVariant('a'), bProd: createVariant('b'), aViewerFolder: createVariant('a', a.refs.folder), aEditorFolder: createVariant('a', a.refs.editFolder),
        aCopyOfAProd: createVariant('a', undefined, publicIds.aProd), bCopyOfAProd: createVariant('b', undefined, publicIds.aProd),
      },
      getAuthoredDashboard: { aProd: readVariant('aProd', '', 'aProdDashTitle'), bProd: readVariant('bProd', '', 'bDashTitle') },
      replaceDashboardDraft: { aWrite: draftVariant('a'), bProd: draftVariant('b'), aEdit: draftVariant('a', publicIds.aEdit) },
      publishDashboard: { aWrite: versionVariant('a', '/publish', true), bProd: versionVariant('b', '/publish', true), aEdit: versionVariant('a', '/publish', true, publicIds.aEdit) },
      listDashboardVersions: { aProd: readVariant('aProd', '/versions', 'aProdDashTitle'), bProd: readVariant('bProd', '/versions', 'bDashTitle') },
      restoreDashboardVersion: {
        aWrite: versionVariant('a', '/versions/1/restore', false), bProd: versionVariant('b', '/versions/1/restore', false), aEdit: versionVariant('a', '/versions/1/restore', false, publicIds.aEdit),
      },
      archiveDashboard: { aFresh: archiveVariant('a'), bFresh: archiveVariant('b'), aFreshInEditable: archiveVariant('a', a.refs.editFolder) },
    };
    // Issue 33, editor grants: an item's grants, read and put back as they are (a 2xx writes its audit entry and
    // new rows of the same grants; a refusal neither), so no other cell sees a change.
    const grantTargets = {
      aFolder: { deploymentId: prodA, itemId: a.refs.folder! },
      bWorkbook: { deploymentId: b.refs.prod!, itemId: b.refs.wbB! },
      aFolderViaBDeployment: { deploymentId: b.refs.prod!, itemId: a.refs.folder! },
    };
    const grantsUrl = (target: keyof typeof grantTargets) => `/api/v1/deployments/${grantTargets[target].deploymentId}/workspace/${grantTargets[target].itemId}/grants`;
    const grantRows = (itemId: number) => t().db.kysely.selectFrom('item_grants').select(['id', 'user_id', 'group_id', 'role']).where('item_id', '=', itemId).orderBy('id').execute();
    const grantAudits = async (itemId: number) => (await t().db.kysely.selectFrom('audit_events').select('id').where('action', '=', 'item.grants.replace').where('target_id', '=', String(itemId)).execute()).length;
    const grantsRead = (target: keyof typeof grantTargets): Variant => ({ prepare: async () => ({ url: grantsUrl(target) }) });
    const grantsReplace = (target: keyof typeof grantTargets): Variant => ({
      prepare: async () => {
        const { itemId } = grantTargets[target];
        const before = await grantRows(itemId);
        const audits = await grantAudits(itemId);
        const same = before.map((g) => ({ ...(g.user_id !== null ? { userId: g.user_id } : { groupId: g.group_id }), role: g.role }));
        return {
          url: grantsUrl(target), payload: { grants: same },
          check: async (res) => {
            const after = await grantRows(itemId);
            expect(after.map(({ id: _id, ...grant }) => grant), 'the grants').toEqual(before.map(({ id: _id, ...grant }) => grant));
            if (!isSuccess(res)) expect(after.map((g) => g.id), 'the grant rows').toEqual(before.map((g) => g.id));
            expect(await grantAudits(itemId), 'the audit entries').toBe(isSuccess(res) ? audits + 1 : audits);
          },
        };
      },
    });
    const itemGrantOperations = {
      listItemGrants: { aFolder: grantsRead('aFolder'), bWorkbook: grantsRead('bWorkbook'), aFolderViaBDeployment: grantsRead('aFolderViaBDeployment') },
      replaceItemGrants: { aFolder: grantsReplace('aFolder'), bWorkbook: grantsReplace('bWorkbook'), aFolderViaBDeployment: grantsReplace('aFolderViaBDeployment') },
    };
    // Issue 34, folders: a folder made in the cell's place, or one made for the cell by its account's admin and
    // renamed or moved; a 2xx made the change, a refusal nothing (read back from the table).
    const itemRow = (id: number) => t().db.kysely.selectFrom('workspace_items').select(['name', 'folder_id']).where('id', '=', id).executeTakeFirst();
    const folderMade = (account: 'a' | 'b', parentId?: number): Variant => ({
      prepare: async () => {
        const name = unique('folder');
        return {
          url: `/api/v1/deployments/${deploymentOf(account)}/workspace/folders`, payload: { name, ...(parentId === undefined ? {} : { parentId }) },
          check: async (res) => {
            const found = await t().db.kysely.selectFrom('workspace_items').select(['deployment_id', 'folder_id']).where('name', '=', name).executeTakeFirst();
            expect(found, 'the folder made').toEqual(isSuccess(res) ? { deployment_id: deploymentOf(account), folder_id: parentId ?? null } : undefined);
          },
        };
      },
    });
    const itemChanged = (account: 'a' | 'b', where: number | undefined, change: 'rename' | { to: number | null }, via: 'a' | 'b' = account): Variant => ({
      prepare: async () => {
        const made = await app.inject({ method: 'POST', url: `/api/v1/deployments/${deploymentOf(account)}/workspace/folders`, headers: adminOf(account), payload: { name: unique('changed'), ...(where === undefined ? {} : { parentId: where }) } });
        expect(made.statusCode, made.body).toBe(201);
        const item = made.json() as { id: number; name: string };
        const payload = change === 'rename' ? { name: `${item.name}-renamed` } : { parentId: change.to };
        return {
          url: `/api/v1/deployments/${deploymentOf(via)}/workspace/${item.id}`, payload,
          check: async (res) => {
            const after = await itemRow(item.id);
            if (change === 'rename') expect(after?.name, 'the name').toBe(isSuccess(res) ? `${item.name}-renamed` : item.name);
            else expect(after?.folder_id, 'the folder').toBe(isSuccess(res) ? change.to : (where ?? null));
          },
        };
      },
    });
    /** `workspacePermissions` over A's folder F and its workbook: alice changes both, mona reads the workbook, nick neither. */
    const permissionsAsked = (deploymentId: number, folderId: number | undefined): Variant => ({
      prepare: async (credential: Credential) => ({
        url: `/api/v1/deployments/${deploymentId}/workspace/permissions?itemId=${a.refs.folder}&itemId=${a.refs.wbProd}&itemId=${b.refs.wbB}${folderId === undefined ? '' : `&folderId=${folderId}`}`,
        check: async (res: LightMyRequestResponse) => {
          if (!isSuccess(res)) return;
          const { items } = res.json() as { items: Array<{ id: number; canEdit: boolean; dashboardPublicId: string | null }> };
          const user = PLATFORM_CALLERS[credential]?.user;
          const expected = user === 'alice'
            ? [{ id: a.refs.folder, canEdit: true, dashboardPublicId: null }, { id: a.refs.wbProd, canEdit: true, dashboardPublicId: w.publicIds.aProd }]
            : user === 'mona' ? [{ id: a.refs.folder, canEdit: false, dashboardPublicId: null }, { id: a.refs.wbProd, canEdit: false, dashboardPublicId: w.publicIds.aProd }]
              : user === 'admin' ? [{ id: b.refs.wbB, canEdit: true, dashboardPublicId: w.publicIds.bProd }] : [];
          expect(items, 'the items answered').toEqual(expected);
        },
      }),
    });
    const workspaceItemOperations = {
      workspacePermissions: {
        aProdFolder: permissionsAsked(prodA, a.refs.folder), bProdRoot: permissionsAsked(b.refs.prod!, undefined), aFolderViaBDeployment: permissionsAsked(b.refs.prod!, a.refs.folder),
      },
      createWorkspaceFolder: { aRoot: folderMade('a'), bRoot: folderMade('b'), aViewerFolder: folderMade('a', a.refs.folder), aEditorFolder: folderMade('a', a.refs.editFolder) },
      updateWorkspaceItem: {
        aRootRename: itemChanged('a', undefined, 'rename'),
        aEditableRename: itemChanged('a', a.refs.editFolder, 'rename'),
        aViewerRename: itemChanged('a', a.refs.folder, 'rename'),
        aEditableToRoot: itemChanged('a', a.refs.editFolder, { to: null }),
        aEditableToViewer: itemChanged('a', a.refs.editFolder, { to: a.refs.folder! }),
        bRename: itemChanged('b', undefined, 'rename'),
        aItemViaBDeployment: itemChanged('a', undefined, 'rename', 'b'),
      },
    };
    const authoringOperations = {
      listDeployments: {
        callerAccount: {
          prepare: async (credential: Credential) => ({
            url: '/api/v1/deployments',
            check: async (res: LightMyRequestResponse) => {
              const ids = isSuccess(res) ? (res.json() as { items: Array<{ id: number }> }).items.map((d) => d.id) : [];
              const account = PLATFORM_CALLERS[credential]?.account;
              expect(ids.includes(prodA), "A's deployment").toBe(isSuccess(res) && account === 'a');
              expect(ids.includes(b.refs.prod!), "B's deployment").toBe(isSuccess(res) && account === 'b');
            },
          }),
        },
      },
      getDeployment: { aProd: deploymentVariant('a', '', ['aProdData']), bProd: deploymentVariant('b', '', ['bData']) },
      getDeploymentMeta: { aProd: deploymentVariant('a', '/meta', []), bProd: deploymentVariant('b', '/meta', []) },
      listPreAggregations: { aProd: deploymentVariant('a', '/pre-aggregations', []), bProd: deploymentVariant('b', '/pre-aggregations', []) },
      replaceDeploymentModel: { aProd: modelVariant('a'), bProd: modelVariant('b') },
      checkDeploymentModel: { aProd: modelCheckVariant('a'), bProd: modelCheckVariant('b') },
      previewQuery: {
        aProd: { prepare: async () => ({ url: `/api/v1/deployments/${prodA}/query`, payload: { query: MARKER_QUERY } }), mustSee: ['aProdData'], alsoVisible: { memberUngranted: ['aProdData'] } } as Variant,
        bProd: { prepare: async () => ({ url: `/api/v1/deployments/${b.refs.prod}/query`, payload: { query: MARKER_QUERY } }), mustSee: ['bData'] } as Variant,
      },
      cubeLoad: {
        aProd: { prepare: async () => ({ url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(prodA) } }), mustSee: ['aProdData'], alsoVisible: { memberUngranted: ['aProdData'] } } as Variant,
        bProd: { prepare: async () => ({ url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }), mustSee: ['bData'] } as Variant,
      },
      cubeLoadPost: {
        aProd: { prepare: async () => ({ url: '/cubejs-api/v1/load', payload: { query: MARKER_QUERY, queryType: 'multi' }, headers: { 'x-svc-deployment-id': String(prodA) } }), mustSee: ['aProdData'], alsoVisible: { memberUngranted: ['aProdData'] } } as Variant,
        bProd: { prepare: async () => ({ url: '/cubejs-api/v1/load', payload: { query: MARKER_QUERY, queryType: 'multi' }, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }), mustSee: ['bData'] } as Variant,
      },
      cubeSql: {
        aProd: { prepare: async () => ({ url: `/cubejs-api/v1/sql?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(prodA) } }) } as Variant,
        bProd: { prepare: async () => ({ url: `/cubejs-api/v1/sql?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }) } as Variant,
      },
      cubeSqlPost: {
        aProd: { prepare: async () => ({ url: '/cubejs-api/v1/sql', payload: { query: MARKER_QUERY }, headers: { 'x-svc-deployment-id': String(prodA) } }) } as Variant,
        bProd: { prepare: async () => ({ url: '/cubejs-api/v1/sql', payload: { query: MARKER_QUERY }, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }) } as Variant,
      },
      cubeDryRun: {
        aProd: { prepare: async () => ({ url: `/cubejs-api/v1/dry-run?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(prodA) } }) } as Variant,
        bProd: { prepare: async () => ({ url: `/cubejs-api/v1/dry-run?query=${encodeURIComponent(JSON.stringify(MARKER_QUERY))}`, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }) } as Variant,
      },
      cubeDryRunPost: {
        aProd: { prepare: async () => ({ url: '/cubejs-api/v1/dry-run', payload: { query: MARKER_QUERY }, headers: { 'x-svc-deployment-id': String(prodA) } }) } as Variant,
        bProd: { prepare: async () => ({ url: '/cubejs-api/v1/dry-run', payload: { query: MARKER_QUERY }, headers: { 'x-svc-deployment-id': String(b.refs.prod) } }) } as Variant,
      },
      cubeMeta: {
        aProd: { prepare: async () => ({ url: '/cubejs-api/v1/meta', headers: { 'x-svc-deployment-id': String(prodA) } }) } as Variant,
        bProd: { prepare: async () => ({ url: '/cubejs-api/v1/meta', headers: { 'x-svc-deployment-id': String(b.refs.prod) } }) } as Variant,
      },
      listAuditEvents: {
        callerAccount: {
          prepare: async (credential: Credential) => ({
            url: '/api/v1/audit',
            check: async (res: LightMyRequestResponse) => {
              if (!isSuccess(res)) return;
              const targets = (res.json() as { items: Array<{ target: { id: string } }> }).items.map((e) => Number(e.target.id));
              const account = PLATFORM_CALLERS[credential]?.account;
              expect(targets.includes(deploymentOf(account === 'a' ? 'b' : 'a')), "the other account's changes").toBe(false);
            },
          }),
        },
      },
    };


    // ---- the admin API (issue 33 part 4): users, API keys, groups, settings, embed tenants and users ----
    // Each cell addresses a fresh row of account A or B made by that account's admin; a 2xx must have done the
    // change, a refusal nothing, re-read by the owner's admin. The account-wide cells check both accounts.
    const asAdmin = async (account: 'a' | 'b', method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
      app.inject({ method, url, headers: adminOf(account), ...(payload !== undefined && { payload }) });
    const made = async (account: 'a' | 'b', url: string, payload: Record<string, unknown>) => {
      const res = await asAdmin(account, 'POST', url, payload);
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: number };
    };
    const tenantName = () => `t${++counter}-${w.suffix}`.toLowerCase();
    const newUser = async (account: 'a' | 'b') => {
      const email = `${unique('member')}@iso.invalid`.toLowerCase();
      return { id: (await made(account, '/api/v1/users', { email, role: 'member' })).id, email };
    };
    const newGroup = async (account: 'a' | 'b') => {
      const name = unique('group');
      return { id: (await made(account, '/api/v1/groups', { name })).id, name };
    };
    const newTenant = async (account: 'a' | 'b') => {
      const name = tenantName();
      return { id: (await made(account, '/api/v1/embed/tenants', { name })).id, name };
    };
    const newEmbedUser = async (account: 'a' | 'b') => {
      const externalId = unique('ahead');
      return { id: (await made(account, '/api/v1/embed/users', { embedTenantName: w.tenants.shared, externalId })).id, name: externalId };
    };
    const statusOf = async (account: 'a' | 'b', url: string) => (await asAdmin(account, 'GET', url)).statusCode;
    /** A row of `account` made for the cell; the request for it; what a 2xx did, re-read by its admin. */
    const ownRow = <T extends { id: number; name?: string; email?: string }>(
      account: 'a' | 'b', make: (account: 'a' | 'b') => Promise<T>, request: (row: T) => Omit<Prepared, 'check'>,
      effect: (res: LightMyRequestResponse, row: T, account: 'a' | 'b') => Promise<void>,
    ): Variant => ({
      prepare: async () => {
        const row = await make(account);
        return { ...request(row), check: async (res) => {
          const shown = row.email ?? row.name;
          if (isSuccess(res) && res.statusCode !== 204 && shown !== undefined && !request(row).url.endsWith('/api-keys')) expect(res.body).toContain(shown);
          await effect(res, row, account);
        } };
      },
    });
    const both = <T extends { id: number; name?: string; email?: string }, A extends string, B extends string>(
      names: [A, B], make: (account: 'a' | 'b') => Promise<T>, request: (row: T) => Omit<Prepared, 'check'>,
      effect: (res: LightMyRequestResponse, row: T, account: 'a' | 'b') => Promise<void> = async () => {},
    ) => ({ [names[0]]: ownRow('a', make, request, effect), [names[1]]: ownRow('b', make, request, effect) }) as Record<A | B, Variant>;
    /** An account-wide write: made in the caller's account only, on 2xx; `exists` asks one account's admin. */
    const created = (url: string, payload: () => Record<string, unknown>, exists: (account: 'a' | 'b', sent: Record<string, unknown>) => Promise<boolean>): Variant => ({
      prepare: async (credential) => {
        const sent = payload();
        return {
          url, payload: sent,
          check: async (res) => {
            const account = PLATFORM_CALLERS[credential]?.account;
            expect(await exists('a', sent), 'made in A').toBe(isSuccess(res) && account === 'a');
            expect(await exists('b', sent), 'made in B').toBe(isSuccess(res) && account === 'b');
          },
        };
      },
    });
    /** An account-wide list: shows a row made in the caller's account, never the other's. */
    const listed = <T extends { id: number; name?: string; email?: string }>(url: string, make: (account: 'a' | 'b') => Promise<T>): Variant => ({
      prepare: async (credential) => {
        const [inA, inB] = [await make('a'), await make('b')];
        return {
          url,
          check: async (res) => {
            const account = PLATFORM_CALLERS[credential]?.account;
            expect(res.body.includes(inA.email ?? inA.name!), "A's row").toBe(isSuccess(res) && account === 'a');
            expect(res.body.includes(inB.email ?? inB.name!), "B's row").toBe(isSuccess(res) && account === 'b');
          },
        };
      },
    });
    const userWithKey = async (account: 'a' | 'b') => {
      const user = await newUser(account);
      return { ...user, keyId: (await made(account, `/api/v1/users/${user.id}/api-keys`, { name: 'iso' })).id };
    };
    const keysOf = async (account: 'a' | 'b', userId: number) => ((await asAdmin(account, 'GET', `/api/v1/users/${userId}/api-keys`)).json().items as Array<{ id: number }>).map((k) => k.id);
    const settingsOf = async (account: 'a' | 'b') => (await asAdmin(account, 'GET', '/api/v1/account/settings')).json() as { locale: string | null };
    const adminOperations = {
      listUsers: { callerAccount: listed('/api/v1/users', newUser) },
      createUser: {
        callerAccount: created('/api/v1/users', () => ({ email: `${unique('new')}@iso.invalid`.toLowerCase(), role: 'member' }),
          async (account, sent) => (await asAdmin(account, 'GET', '/api/v1/users')).body.includes(String(sent.email))),
      },
      getUser: both(['aUser', 'bUser'], newUser, (user) => ({ url: `/api/v1/users/${user.id}` })),
      updateUser: both(['aUser', 'bUser'], newUser, (user) => ({ url: `/api/v1/users/${user.id}`, payload: { firstName: `changed-${user.id}` } }), async (res, user, account) => {
        expect((await asAdmin(account, 'GET', `/api/v1/users/${user.id}`)).json().firstName, 'the first name').toBe(isSuccess(res) ? `changed-${user.id}` : null);
      }),
      deleteUser: both(['aUser', 'bUser'], newUser, (user) => ({ url: `/api/v1/users/${user.id}` }), async (res, user, account) => {
        expect(await statusOf(account, `/api/v1/users/${user.id}`), 'the user').toBe(isSuccess(res) ? 404 : 200);
      }),
      listApiKeys: both(['aUser', 'bUser'], userWithKey, (user) => ({ url: `/api/v1/users/${user.id}/api-keys` }), async (res, user) => {
        if (isSuccess(res)) expect((res.json().items as Array<{ id: number }>).map((k) => k.id)).toEqual([user.keyId]);
      }),
      createApiKey: both(['aUser', 'bUser'], newUser, (user) => ({ url: `/api/v1/users/${user.id}/api-keys`, payload: { name: 'cell' } }), async (res, user, account) => {
        expect((await keysOf(account, user.id)).length, 'the keys of the user').toBe(isSuccess(res) ? 1 : 0);
      }),
      deleteApiKey: both(['aKey', 'bKey'], userWithKey, (user) => ({ url: `/api/v1/users/${user.id}/api-keys/${user.keyId}` }), async (res, user, account) => {
        expect(await keysOf(account, user.id), 'the keys of the user').toEqual(isSuccess(res) ? [] : [user.keyId]);
      }),
      listGroups: { callerAccount: listed('/api/v1/groups', newGroup) },
      createGroup: {
        callerAccount: created('/api/v1/groups', () => ({ name: unique('new-group') }),
          async (account, sent) => (await asAdmin(account, 'GET', '/api/v1/groups')).body.includes(String(sent.name))),
      },
      getGroup: both(['aGroup', 'bGroup'], newGroup, (group) => ({ url: `/api/v1/groups/${group.id}` })),
      updateGroup: both(['aGroup', 'bGroup'], newGroup, (group) => ({ url: `/api/v1/groups/${group.id}`, payload: { memberIds: [] , name: `${group.name}-renamed` } }), async (res, group, account) => {
        expect((await asAdmin(account, 'GET', `/api/v1/groups/${group.id}`)).json().name, 'the name').toBe(isSuccess(res) ? `${group.name}-renamed` : group.name);
      }),
      deleteGroup: both(['aGroup', 'bGroup'], newGroup, (group) => ({ url: `/api/v1/groups/${group.id}` }), async (res, group, account) => {
        expect(await statusOf(account, `/api/v1/groups/${group.id}`), 'the group').toBe(isSuccess(res) ? 404 : 200);
      }),
      getAccountSettings: {
        callerAccount: { prepare: async () => ({ url: '/api/v1/account/settings', check: async (res: LightMyRequestResponse) => {
          if (isSuccess(res)) expect(Object.keys(res.json() as object).sort()).toEqual(['allowEmbedComments', 'allowedEmbedOrigins', 'locale', 'timezone']);
        } }) },
      },
      updateAccountSettings: {
        callerAccount: {
          prepare: async (credential: Credential) => {
            const before = { a: (await settingsOf('a')).locale, b: (await settingsOf('b')).locale };
            const locale = before.a === 'fr-FR' || before.b === 'fr-FR' ? 'de-DE' : 'fr-FR';
            return {
              url: '/api/v1/account/settings', payload: { locale },
              check: async (res: LightMyRequestResponse) => {
                const account = PLATFORM_CALLERS[credential]?.account;
                for (const owner of ['a', 'b'] as const) {
                  const changed = isSuccess(res) && account === owner;
                  expect((await settingsOf(owner)).locale, `the locale of ${owner.toUpperCase()}`).toBe(changed ? locale : before[owner]);
                  if (changed) await asAdmin(owner, 'PATCH', '/api/v1/account/settings', { locale: before[owner] });
                }
              },
            };
          },
        },
      },
      listEmbedTenants: { callerAccount: listed('/api/v1/embed/tenants', newTenant) },
      createEmbedTenant: {
        callerAccount: created('/api/v1/embed/tenants', () => ({ name: tenantName() }),
          async (account, sent) => (await asAdmin(account, 'GET', '/api/v1/embed/tenants')).body.includes(`"${String(sent.name)}"`)),
      },
      getEmbedTenant: both(['aTenant', 'bTenant'], newTenant, (tenant) => ({ url: `/api/v1/embed/tenants/${tenant.id}` })),
      updateEmbedTenant: both(['aTenant', 'bTenant'], newTenant, (tenant) => ({ url: `/api/v1/embed/tenants/${tenant.id}`, payload: { name: `${tenant.name}-x` } }), async (res, tenant, account) => {
        expect((await asAdmin(account, 'GET', `/api/v1/embed/tenants/${tenant.id}`)).json().name, 'the name').toBe(isSuccess(res) ? `${tenant.name}-x` : tenant.name);
      }),
      deleteEmbedTenant: both(['aTenant', 'bTenant'], newTenant, (tenant) => ({ url: `/api/v1/embed/tenants/${tenant.id}` }), async (res, tenant, account) => {
        expect(await statusOf(account, `/api/v1/embed/tenants/${tenant.id}`), 'the tenant').toBe(isSuccess(res) ? 404 : 200);
      }),
      createEmbedUser: {
        callerAccount: created('/api/v1/embed/users', () => ({ embedTenantName: w.tenants.shared, externalId: unique('made-ahead') }),
          async (account, sent) => (await embedUsersOf(account)).some((u) => u.externalId === sent.externalId)),
      },
      getEmbedUser: both(['aEmbedUser', 'bEmbedUser'], newEmbedUser, (user) => ({ url: `/api/v1/embed/users/${user.id}` })),
      updateEmbedUser: both(['aEmbedUser', 'bEmbedUser'], newEmbedUser, (user) => ({ url: `/api/v1/embed/users/${user.id}`, payload: { firstName: `changed-${user.id}` } }), async (res, user, account) => {
        expect((await asAdmin(account, 'GET', `/api/v1/embed/users/${user.id}`)).json().firstName, 'the first name').toBe(isSuccess(res) ? `changed-${user.id}` : null);
      }),
    };

    // ---- Issue 35 saved charts and views: a fresh item of the owner (tenant `shared`) or of the other tenant's
    // viewer for each cell, shared with its tenant unless said; its title or name shows in an answer exactly when
    // the cell succeeds, and a refused write changed nothing (read back by its author). ----
    const embedSessionOf = (credential: Credential) => ({
      embedOwner: sessions.owner, embedOtherTenant: sessions.otherTenant, embedOtherAccount: sessions.otherAccount, embedOtherDeployment: sessions.otherDeployment,
    } as Partial<Record<Credential, MintedSession>>)[credential];
    const savedCharts = '/api/v1/embed/charts';
    const newSavedChart = async (author: MintedSession, visibility: 'private' | 'tenant') => {
      const title = unique('saved-chart');
      const res = await app.inject({ method: 'POST', url: savedCharts, headers: author.headers, payload: { title, query: MARKER_QUERY, kind: 'table', visibility } });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id as string, title };
    };
    const chartOf = async (author: MintedSession, id: string) => {
      const res = await app.inject({ url: `${savedCharts}/${id}`, headers: author.headers });
      return res.statusCode === 200 ? res.json() as { title: string } : undefined;
    };
    const savedChartCell = (author: 'owner' | 'otherTenant', visibility: 'private' | 'tenant', verb: 'get' | 'update' | 'delete'): Variant => ({
      prepare: async () => {
        const chart = await newSavedChart(sessions[author], visibility);
        return {
          url: `${savedCharts}/${chart.id}`,
          ...(verb === 'update' && { payload: { title: `${chart.title}-renamed` } }),
          check: async (res) => {
            expect(res.body.includes(chart.title), 'the chart in the answer').toBe(isSuccess(res) && verb !== 'delete');
            const after = await chartOf(sessions[author], chart.id);
            if (verb === 'delete') expect(after === undefined, 'the chart is gone').toBe(isSuccess(res));
            else expect(after?.title, 'the title').toBe(isSuccess(res) && verb === 'update' ? `${chart.title}-renamed` : chart.title);
          },
        };
      },
    });
    const savedViews = (publicId: string) => `/api/v1/embed/dashboard/${publicId}/views`;
    const newSavedView = async (author: MintedSession, publicId: string) => {
      const name = unique('saved-view');
      const res = await app.inject({ method: 'POST', url: savedViews(publicId), headers: author.headers, payload: { name, state: { filters: { 'marks.label': 'x' } }, visibility: 'tenant' } });
      expect(res.statusCode, res.body).toBe(201);
      return { id: res.json().id as string, name };
    };
    const savedViewCell = (author: 'owner' | 'otherTenant', pathPublicId: string, verb: 'get' | 'update' | 'delete'): Variant => ({
      prepare: async () => {
        const view = await newSavedView(sessions[author], publicIds.aWrite);
        return {
          url: `${savedViews(pathPublicId)}/${view.id}`,
          ...(verb === 'update' && { payload: { name: `${view.name}-renamed` } }),
          check: async (res) => {
            expect(res.body.includes(view.name), 'the view in the answer').toBe(isSuccess(res) && verb !== 'delete');
            const read = await app.inject({ url: `${savedViews(publicIds.aWrite)}/${view.id}`, headers: sessions[author].headers });
            if (verb === 'delete') expect(read.statusCode, 'the view').toBe(isSuccess(res) ? 404 : 200);
            else expect(read.json().name, 'the name').toBe(isSuccess(res) && verb === 'update' ? `${view.name}-renamed` : view.name);
          },
        };
      },
    });
    const savedViewCells = (verb: 'get' | 'update' | 'delete') => ({
      sharedView: savedViewCell('owner', publicIds.aWrite, verb),
      secondView: savedViewCell('otherTenant', publicIds.aWrite, verb),
      sharedViewViaAStage: savedViewCell('owner', publicIds.aStage, verb),
      sharedViewViaBProd: savedViewCell('owner', publicIds.bProd, verb),
    });
    /** Reads of a list: the owner's fresh shared item is listed to the owner only (its tenant, deployment and account). */
    const savedListCell = (url: string, make: () => Promise<string>, readers: readonly Credential[]): Variant => ({
      prepare: async (credential) => {
        const marker = await make();
        return {
          url,
          check: async (res) => expect(res.body.includes(marker), 'the owner\'s item listed').toBe(isSuccess(res) && readers.includes(credential)),
        };
      },
    });
    /** A save: made for the caller, in its own scope only (its author reads it back; nobody else's list has it). */
    const savedCreateCell = (url: string, payload: (name: string) => Record<string, unknown>, readBack: (session: MintedSession) => string): Variant => ({
      prepare: async (credential) => {
        const name = unique('saved');
        return {
          url, payload: payload(name),
          check: async (res) => {
            for (const reader of ['embedOwner', 'embedOtherTenant', 'embedOtherAccount', 'embedOtherDeployment'] as const) {
              const session = embedSessionOf(reader)!;
              const listed = await app.inject({ url: readBack(session), headers: session.headers });
              expect(listed.body.includes(name), `${reader}'s list`).toBe(isSuccess(res) && reader === credential);
            }
          },
        };
      },
    });
    const readsOfViews = (session: MintedSession) => savedViews(session === sessions.otherAccount ? publicIds.bProd : session === sessions.otherDeployment ? publicIds.aStage : publicIds.aProd);
    const savedOperations = {
      listSavedCharts: { callerScope: savedListCell(savedCharts, async () => (await newSavedChart(sessions.owner, 'tenant')).title, ['embedOwner']) },
      createSavedChart: { callerScope: savedCreateCell(savedCharts, (title) => ({ title, query: MARKER_QUERY, kind: 'table', visibility: 'tenant' }), () => savedCharts) },
      getSavedChart: { ownerShared: savedChartCell('owner', 'tenant', 'get'), ownerPrivate: savedChartCell('owner', 'private', 'get'), secondShared: savedChartCell('otherTenant', 'tenant', 'get') },
      updateSavedChart: { ownerShared: savedChartCell('owner', 'tenant', 'update'), secondShared: savedChartCell('otherTenant', 'tenant', 'update') },
      deleteSavedChart: { ownerShared: savedChartCell('owner', 'tenant', 'delete'), secondShared: savedChartCell('otherTenant', 'tenant', 'delete') },
      listSavedViews: {
        aProd: savedListCell(savedViews(publicIds.aProd), async () => (await newSavedView(sessions.owner, publicIds.aProd)).name, ['embedOwner']),
        aStage: savedListCell(savedViews(publicIds.aStage), async () => (await newSavedView(sessions.otherDeployment, publicIds.aStage)).name, ['embedOtherDeployment']),
        bProd: savedListCell(savedViews(publicIds.bProd), async () => (await newSavedView(sessions.otherAccount, publicIds.bProd)).name, ['embedOtherAccount']),
      },
      createSavedView: {
        aProd: savedCreateCell(savedViews(publicIds.aProd), (name) => ({ name, state: { filters: {} }, visibility: 'tenant' }), readsOfViews),
        bProd: savedCreateCell(savedViews(publicIds.bProd), (name) => ({ name, state: { filters: {} }, visibility: 'tenant' }), readsOfViews),
      },
      getSavedView: savedViewCells('get'),
      updateSavedView: savedViewCells('update'),
      deleteSavedView: savedViewCells('delete'),
    };

    return {
      ...savedOperations,
      ...webhookOperations,
      ...authoringOperations,
      ...adminOperations,
      ...dashboardAuthoring,
      ...itemGrantOperations,
      ...workspaceItemOperations,
      getMe: {
        caller: {
          prepare: async (credential) => ({
            url: '/api/v1/me',
            check: async (res) => {
              if (!isSuccess(res)) return;
              const caller = PLATFORM_CALLERS[credential]!;
              const world = caller.account === 'a' ? a : b;
              expect(res.json().user.id, 'the caller').toBe(world.refs[caller.user]);
              expect(res.json().signedInWith).toBe(credential === 'consoleSession' ? 'console' : 'api-key');
            },
          }),
        },
      },
      checkLiveness: {
        process: { prepare: async () => ({ url: '/healthz', check: async (res) => expect(res.json()).toEqual({ status: 'ok' }) }) },
      },
      checkReadiness: {
        database: { prepare: async () => ({ url: '/readyz', check: async (res) => expect(res.json()).toEqual({ status: 'ok' }) }) },
      },
      login: {
        bystanderPassword: {
          prepare: async () => ({
            url: '/api/v1/auth/login',
            payload: { email: w.emails.cora, password: w.password },
            check: async (res) => {
              expect(res.json().user).toMatchObject({ id: a.refs.cora, email: w.emails.cora });
              expect(res.cookies.some((c) => c.name === 'svc_console')).toBe(true);
            },
          }),
        },
      },
      logout: {
        callerCookie: {
          prepare: async (credential) => {
            // Signing out must end the caller's own console session only: the console cell signs out a fresh one.
            const fresh = credential === 'consoleSession' ? await w.login() : undefined;
            return {
              url: '/api/v1/auth/logout',
              ...(fresh !== undefined && { headers: { cookie: fresh, 'x-requested-with': 'svc' } }),
              check: async () => {
                if (fresh !== undefined) expect(await listingStatus(fresh), 'the signed-out cookie').toBe(401);
                expect(await listingStatus(w.consoleCookie), "alice's other console session").toBe(200);
              },
            };
          },
        },
      },
      generateEmbedSession: {
        aProd: generateFor('a'),
        bProd: generateFor('b'),
      },
      exchangeEmbedSession: {
        aSessionId: {
          prepare: async () => {
            const sessionId = await w.generate('a', { deploymentId: prodA, externalId: unique('exchange'), embedTenantName: w.tenants.shared });
            return {
              url: '/api/v1/embed/session/token',
              payload: { sessionId },
              check: async (res) => {
                const session = await sessionOf({ authorization: `Embed-Token ${res.json().token}` });
                expect(session).toMatchObject({ deploymentId: prodA, embedTenant: w.tenants.shared });
              },
            };
          },
        },
      },
      revokeEmbedSession: {
        externalIdInBothAccounts: {
          prepare: async (credential) => {
            // The same externalId in the same-named tenant of both accounts: only the caller's account's is revoked.
            const externalId = unique('victim');
            const inA = await w.mint('a', { deploymentId: prodA, externalId, embedTenantName: w.tenants.shared });
            const inB = await w.mint('b', { deploymentId: b.refs.prod, externalId, embedTenantName: w.tenants.shared });
            return {
              url: '/api/v1/embed/session/revoke',
              payload: { externalId, embedTenantName: w.tenants.shared },
              check: async (res) => {
                const account = PLATFORM_CALLERS[credential]?.account;
                expect(await isAlive(inA), "A's viewer").toBe(!(isSuccess(res) && account === 'a'));
                expect(await isAlive(inB), "B's viewer").toBe(!(isSuccess(res) && account === 'b'));
              },
            };
          },
        },
        aSessionId: {
          prepare: async (credential) => {
            const victim = await w.mint('a', { deploymentId: prodA, externalId: unique('victim'), embedTenantName: w.tenants.shared });
            return {
              url: '/api/v1/embed/session/revoke',
              payload: { sessionId: victim.sessionId },
              check: async (res) => {
                expect(await isAlive(victim), "A's viewer").toBe(!(isSuccess(res) && PLATFORM_CALLERS[credential]?.account === 'a'));
              },
            };
          },
        },
      },
      currentEmbedSession: {
        callerSession: {
          prepare: async (credential) => ({
            url: '/api/v1/embed/session',
            check: async (res) => {
              const session = res.json().session;
              const signed = (deploymentId: number, embedTenant: string | null, extra: Record<string, unknown>) => ({ mode: 'signed', deploymentId, embedTenant, ...extra });
              const expected: Record<Credential, Record<string, unknown> | null> = {
                none: null, adminKey: null, memberGranted: null, memberUngranted: null, otherAccountAdminKey: null, embedRevoked: null, embedExpired: null,
                embedOwner: signed(prodA, w.tenants.shared, { embedUserId: sessions.owner.embedUserId }),
                embedOtherTenant: signed(prodA, w.tenants.second, { embedUserId: sessions.otherTenant.embedUserId }),
                embedOtherAccount: signed(b.refs.prod!, w.tenants.shared, { embedUserId: sessions.otherAccount.embedUserId }),
                embedOtherDeployment: signed(a.refs.stage!, w.tenants.shared, { embedUserId: sessions.owner.embedUserId }),
                embedInternalId: signed(prodA, null, { embedUserId: null, userId: a.refs.mona }),
                consoleSession: { mode: 'private', userId: a.refs.alice },
              };
              const want = expected[credential];
              if (want === null) expect(session).toBeNull();
              else expect(session).toMatchObject(want);
            },
          }),
        },
      },
      listEmbedUsers: {
        allTenants: {
          prepare: async () => ({ url: '/api/v1/embed/users' }),
          mustSee: { adminKey: ['aSharedUsername', 'aSharedEmail', 'aSharedSeededUsername', 'aSecondUsername'], consoleSession: ['aSharedUsername', 'aSecondUsername'], otherAccountAdminKey: ['bSharedUsername'] },
        },
        sharedTenantName: {
          // A tenant name both accounts use: each admin gets its own account's tenant only.
          prepare: async () => ({ url: `/api/v1/embed/users?embedTenantName=${w.tenants.shared}` }),
          mustSee: { adminKey: ['aSharedUsername', 'aSharedSeededUsername'], consoleSession: ['aSharedUsername'], otherAccountAdminKey: ['bSharedUsername'] },
          hidden: ['aSecondUsername'],
        },
      },
      deleteEmbedUser: {
        aEmbedUser: deleteEmbedUserOf('a'),
        bEmbedUser: deleteEmbedUserOf('b'),
      },
      getEmbedDashboard: dashboardReads((d) => `/api/v1/embed/dashboard/${d.publicId}`),
      getEmbedWorkbookDashboard: dashboardReads((d) => `/api/v1/embed/deployments/${d.deploymentId}/workbooks/${d.workbookId}/dashboard`),
      getWidgetData: dashboardReads((d) => `/api/v1/embed/dashboard/${d.publicId}/widgets/chart/data`, {}),
      checkDashboardFilters: (() => {
        // Its answer is the model's titles (no rows): read as the dashboard is, it must show no other's data.
        const reads = dashboardReads((d) => `/api/v1/embed/dashboard/${d.publicId}/filters/check`, { filters: { 'marks.label': 'x' } });
        return { aProd: { ...reads.aProd, mustSee: [] }, aStage: { ...reads.aStage, mustSee: [] }, bProd: { ...reads.bProd, mustSee: [] } };
      })(),
      runAppQuery: {
        aApp: { prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aApp}/query`, payload: { query: MARKER_QUERY } }), mustSee: ['aProdData'] },
        bApp: { prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.bApp}/query`, payload: { query: MARKER_QUERY } }), mustSee: ['bData'] },
      },
      askQuestion: (() => {
        // The AI endpoint (a test double) is asked exactly when the answer is a 200: a refused caller's question
        // never reaches it, with the semantic model of a deployment it may not read.
        const ask = (publicId: string | undefined): Variant['prepare'] => async () => {
          const asked = fake.requests.length;
          return {
            url: '/api/v1/embed/ai/query',
            payload: { question: 'How many marks?', ...(publicId !== undefined && { publicId }) },
            check: async (res) => expect(fake.requests.length - asked, 'questions sent to the AI endpoint').toBe(res.statusCode === 200 ? 1 : 0),
          };
        };
        return {
          aProd: { prepare: ask(publicIds.aProd), mustSee: ['aProdData'], hidden: ['aStageData'] },
          bProd: { prepare: ask(publicIds.bProd), mustSee: ['bData'] },
          sessionDeployment: {
            prepare: ask(undefined),
            mustSee: { embedOwner: ['aProdData'], embedOtherTenant: ['aProdData'], embedInternalId: ['aProdData'], embedOtherAccount: ['bData'], embedOtherDeployment: ['aStageData'] },
          },
        };
      })(),
      listDashboardComments: {
        aProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aProd}/comments?includeResolved=true&first=200` }),
          mustSee: { embedOwner: ['aSharedComment'], embedOtherTenant: ['aSecondComment'] },
          hidden: ['aSharedStageComment'],
        },
        aStage: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aStage}/comments?includeResolved=true&first=200` }),
          mustSee: { embedOtherDeployment: ['aSharedStageComment'] },
          hidden: ['aSharedComment'],
        },
        bProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.bProd}/comments?includeResolved=true&first=200` }),
          mustSee: { embedOtherAccount: ['bSharedComment'] },
        },
      },
      // From the start (Last-Event-ID 0): the stream replays every event of the caller's scope, comments and all.
      streamDashboardComments: {
        aProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aProd}/comments/stream`, headers: { 'last-event-id': '0' } }),
          mustSee: { embedOwner: ['aSharedComment'], embedOtherTenant: ['aSecondComment'] },
          hidden: ['aSharedStageComment'],
        },
        aStage: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aStage}/comments/stream`, headers: { 'last-event-id': '0' } }),
          mustSee: { embedOtherDeployment: ['aSharedStageComment'] },
          hidden: ['aSharedComment'],
        },
        bProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.bProd}/comments/stream`, headers: { 'last-event-id': '0' } }),
          mustSee: { embedOtherAccount: ['bSharedComment'] },
        },
      },
      postDashboardComment: {
        newThreadOnAProd: commentPost(publicIds.aProd, undefined),
        replyToSharedRoot: commentPost(publicIds.aProd, w.roots.aSharedOnProd),
        replyToSharedRootViaBProd: commentPost(publicIds.bProd, w.roots.aSharedOnProd),
      },
      listMentionableUsers: {
        aProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aProd}/comments/mentionable-users?first=200` }),
          mustSee: { embedOwner: ['aSharedUsername', 'aSharedEmail', 'aSharedSeededUsername'], embedOtherTenant: ['aSecondUsername'] },
        },
        aStage: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.aStage}/comments/mentionable-users?first=200` }),
          mustSee: { embedOtherDeployment: ['aSharedUsername', 'aSharedSeededUsername'] },
        },
        bProd: {
          prepare: async () => ({ url: `/api/v1/embed/dashboard/${publicIds.bProd}/comments/mentionable-users?first=200` }),
          mustSee: { embedOtherAccount: ['bSharedUsername'] },
        },
      },
      editDashboardComment: commentWrites({ suffix: '', payload: (n) => ({ body: `${n}-edited` }) }, (thread, made, original) => {
        expect(thread, 'the thread').toBeDefined();
        expect(thread?.root.body).toBe(made ? `${original}-edited` : original);
      }),
      deleteDashboardComment: commentWrites({ suffix: '' }, (thread, made) => {
        expect(thread === undefined, 'the thread is gone').toBe(made);
      }),
      resolveDashboardThread: commentWrites({ suffix: '/resolve', payload: () => ({ resolved: true }) }, (thread, made) => {
        expect(thread, 'the thread').toBeDefined();
        expect(thread?.resolvedAt != null, 'the thread is resolved').toBe(made);
      }),
      workspaceObjects: {
        aProdRoot: {
          prepare: async () => ({ url: `/api/v1/deployments/${prodA}/workspace` }),
          mustSee: {
            adminKey: ['aFolderName', 'aPrivateName', 'aNickReportName', 'aliceFirstName'],
            consoleSession: ['aFolderName', 'aPrivateName', 'aNickReportName', 'aliceFirstName'],
            memberGranted: ['aFolderName', 'aliceFirstName'],
            memberUngranted: ['aNickReportName'],
          },
          hidden: ['aStageWorkbookName', 'aStageDashTitle'],
        },
        aProdFolder: {
          prepare: async () => ({ url: `/api/v1/deployments/${prodA}/workspace?folderId=${a.refs.folder}` }),
          mustSee: {
            adminKey: ['aProdWorkbookName', 'aProdDashTitle', 'aWriteDashTitle', 'aAppDashTitle'],
            consoleSession: ['aProdWorkbookName', 'aProdDashTitle'],
            memberGranted: ['aProdWorkbookName', 'aProdDashTitle', 'aFolderName'],
          },
        },
        aStageRoot: {
          // Nobody is granted anything in stage: the members list it, empty.
          prepare: async () => ({ url: `/api/v1/deployments/${a.refs.stage}/workspace` }),
          mustSee: { adminKey: ['aStageWorkbookName', 'aStageDashTitle', 'aliceFirstName'], consoleSession: ['aStageWorkbookName'] },
          hidden: ['aFolderName', 'aPrivateName', 'aNickReportName'],
        },
        bProdRoot: {
          prepare: async () => ({ url: `/api/v1/deployments/${b.refs.prod}/workspace` }),
          mustSee: { otherAccountAdminKey: ['bWorkbookName', 'bAdminFirstName', 'bDashTitle', 'bAppDashTitle'] },
        },
        aFolderViaBDeployment: {
          prepare: async () => ({ url: `/api/v1/deployments/${b.refs.prod}/workspace?folderId=${a.refs.folder}` }),
        },
      },
      recordWorkspaceItemView: itemWrite('item_views', (rows, userId) => rows.includes(`${userId}|${nowIso()}`)),
      favoriteWorkspaceItem: itemWrite('item_favorites', (rows, userId) => rows.includes(`${userId}|`)),
      // The caller favorites first (with the same credential, so only where it may), so that a 204 removed something.
      unfavoriteWorkspaceItem: itemWrite('item_favorites', (rows, userId) => !rows.includes(`${userId}|`), async (credential, url) => {
        await app.inject({ method: 'PUT', url, headers: w.headersOf(credential) });
      }),
    };
  }

  // ---- the cells ----

  /**
   * A request to an event stream, which does not end by itself: its answer is what arrived until the stream fell
   * quiet after its first event (the replay of a resume comes right after it); then the client leaves.
   */
  async function injectStream(request: InjectOptions): Promise<LightMyRequestResponse> {
    const res = await app.inject({ ...request, payloadAsStream: true });
    const stream = res.stream();
    let body = '';
    await new Promise<void>((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(quiet);
        resolve();
      };
      const limit = setTimeout(done, 5000);
      stream.on('data', (chunk: Buffer) => {
        body += chunk.toString();
        if (!body.includes('event: ')) return;
        clearTimeout(quiet);
        quiet = setTimeout(() => {
          clearTimeout(limit);
          done();
        }, 200);
      });
      stream.on('end', () => {
        clearTimeout(limit);
        done();
      });
    });
    (res.raw.res as { destroy(): void }).destroy();
    stream.destroy();
    return { statusCode: res.statusCode, headers: res.headers, body, payload: body, json: () => JSON.parse(body) } as unknown as LightMyRequestResponse;
  }

  async function runCell(operationKey: OperationKey, variantName: string, credential: Credential, expected: Status): Promise<void> {
    const operation = documented.get(operationKey);
    if (operation === undefined) throw new Error(`${operationKey} is not in the OpenAPI document: remove it from the matrix`);
    const variant = (operations[operationKey] as Record<string, Variant>)[variantName]!;
    const prepared = await variant.prepare(credential);
    expect(prepared.url.split('?')[0], `the request of ${operationKey} must address its documented path`).toMatch(operation.path);
    const request = {
      method: operation.method as 'GET',
      url: prepared.url,
      headers: { ...w.headersOf(credential), ...prepared.headers },
      ...(prepared.payload !== undefined && { payload: prepared.payload }),
    };
    const res = operation.streams ? await injectStream(request) : await app.inject(request);
    expect.soft(res.statusCode, `${operation.method} ${prepared.url} as ${credential}: ${res.body.slice(0, 400)}`).toBe(expected);
    if (res.statusCode >= 400 && prepared.url.startsWith('/cubejs-api/')) {
      // Cube's REST API answers in Cube's error shape, which its clients read as a string (docs/cube.md).
      const body = res.json() as { error?: unknown; code?: unknown };
      expect.soft(typeof body.error, 'error').toBe('string');
      expect.soft(typeof body.code, 'code').toBe('string');
    } else if (res.statusCode >= 400) {
      // DESIGN: the error body of every non-2xx answer.
      const body = res.json() as { error?: { status?: unknown; code?: unknown; message?: unknown } };
      expect.soft(body.error?.status, 'error.status').toBe(res.statusCode);
      expect.soft(typeof body.error?.code, 'error.code').toBe('string');
      expect.soft(typeof body.error?.message, 'error.message').toBe('string');
    }
    const leaked = ALL_MARKERS.filter((key) => res.body.includes(w.markers[key])
      && (!(VISIBILITY[MARKER_GROUPS[key]].includes(credential) || variant.alsoVisible?.[credential]?.includes(key) === true) || variant.hidden?.includes(key)));
    expect.soft(leaked, `data of others in the answer to ${credential}: ${res.body.slice(0, 400)}`).toEqual([]);
    if (isSuccess(res)) {
      const mustSee = mustSeeOf(variant, credential);
      const missing = mustSee.filter((key) => !res.body.includes(w.markers[key]));
      expect.soft(missing, `the caller's own data missing from ${res.body.slice(0, 400)}`).toEqual([]);
      for (const key of mustSee) if (!missing.includes(key)) shown.add(key);
    }
    await prepared.check?.(res);
    cellsRun++;
  }

  it('covers every operation of the OpenAPI document, and only those: a new endpoint needs its rows in the matrix', () => {
    const inMatrix = new Set<string>(Object.keys(EXPECTED));
    expect([...documented.keys()].filter((key) => !inMatrix.has(key)), 'operations without rows in the isolation matrix').toEqual([]);
    expect([...inMatrix].filter((key) => !documented.has(key)), 'rows of operations the document does not have').toEqual([]);
  });

  it('mints credentials that only their scope tells apart: the revoked, expired and other-deployment tokens are the owner\'s embed user', async () => {
    const { owner, otherTenant, otherAccount, otherDeployment, revoked, expired, internalId } = w.sessions;
    expect(owner.embedUserId).not.toBeNull();
    for (const same of [otherDeployment, revoked, expired]) expect(same.embedUserId).toBe(owner.embedUserId);
    expect(new Set([owner.embedUserId, otherTenant.embedUserId, otherAccount.embedUserId]).size).toBe(3);
    expect(internalId.embedUserId).toBeNull();
    expect(await isAlive(revoked)).toBe(false);
    expect(await isAlive(expired)).toBe(false);
    // The expired token is refused only because time passed: an hour less than its lifetime ago, it was good.
    clock -= TOKEN_TTL_MS;
    try {
      expect(await isAlive(expired)).toBe(true);
    } finally {
      clock += TOKEN_TTL_MS;
    }
  });

  let totalCells = 0;
  for (const [operationKey, variants] of Object.entries(EXPECTED) as Array<[OperationKey, Record<string, Row>]>) {
    for (const [variantName, row] of Object.entries(variants)) {
      CREDENTIALS.forEach((credential, column) => {
        totalCells++;
        it(`${operationKey} | ${variantName} | ${credential} -> ${row[column]}`, () => runCell(operationKey, variantName, credential, row[column]!));
      });
    }
  }

  it('shows every seeded marker to someone entitled to it (so no leak check above is vacuous)', () => {
    expect(cellsRun, 'run the whole matrix (no -t filter) for this check').toBe(totalCells);
    expect(ALL_MARKERS.filter((key) => !shown.has(key)), 'markers no cell was required to show').toEqual([]);
  });
});
