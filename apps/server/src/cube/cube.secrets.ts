import { randomBytes } from 'node:crypto';
import { decodeJwt, errors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { findCubeSecret, findDeploymentInAccount, writeCubeSecret } from '../accounts/accounts.store.js';
import { recordChange } from '../audit/audit.store.js';
import { AppError } from '../core/core.errors.js';
import { requireAdmin } from '../core/core.principal.js';
import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import type { Sealer } from '../core/core.sealed.js';
import type { ServiceContext } from '../db/db.context.js';

// Issue 36, Cube-style JWTs (docs/cube.md "A Cube JWT"): a deployment's Cube API secret, which admins make and
// rotate through the platform API, and the tokens a host's backend signs with it (HS256), as Cube's
// `CUBEJS_API_SECRET` and `cube(token)` work. The token's claims are the security context of the policies.

export interface CubeSecretContext extends ServiceContext {
  sealer: Sealer;
}

/** The header a caller names its deployment with (also the API key's way). */
export const DEPLOYMENT_HEADER = 'x-svc-deployment-id';
/** Longest Cube token read (the claims are a security context, not a document). */
const MAX_TOKEN_LENGTH = 8192;
const NOT_FOUND = (deploymentId: number) => new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');

/**
 * Makes the deployment's Cube API secret, or replaces it (a rotation): tokens signed with the old one are refused
 * from this moment. The secret is answered this once; svc keeps it sealed (SVC_ENCRYPTION_KEY). Admins only.
 */
export async function createCubeSecret(ctx: CubeSecretContext, principal: PlatformUserPrincipal, deploymentId: number): Promise<{ deploymentId: number; secret: string; createdAt: string }> {
  if ((await findDeploymentInAccount(ctx.db, principal.accountId, deploymentId)) === undefined) throw NOT_FOUND(deploymentId);
  requireAdmin(principal);
  const secret = randomBytes(32).toString('base64url');
  const createdAt = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const rotated = (await findCubeSecret(trx, deploymentId)) !== undefined;
    if (!(await writeCubeSecret(trx, principal.accountId, deploymentId, ctx.sealer.seal(secret), createdAt))) throw NOT_FOUND(deploymentId);
    await recordChange(trx, principal, createdAt, { action: rotated ? 'cube_secret.rotate' : 'cube_secret.create', targetType: 'deployment', targetId: deploymentId, detail: {} });
  });
  return { deploymentId, secret, createdAt };
}

/** Removes the deployment's Cube API secret: no Cube JWT is accepted for it until a new one is made. Admins only. */
export async function revokeCubeSecret(ctx: CubeSecretContext, principal: PlatformUserPrincipal, deploymentId: number): Promise<void> {
  if ((await findDeploymentInAccount(ctx.db, principal.accountId, deploymentId)) === undefined) throw NOT_FOUND(deploymentId);
  requireAdmin(principal);
  await ctx.db.transaction().execute(async (trx) => {
    await writeCubeSecret(trx, principal.accountId, deploymentId, null, null);
    await recordChange(trx, principal, ctx.now().toISOString(), { action: 'cube_secret.revoke', targetType: 'deployment', targetId: deploymentId, detail: {} });
  });
}

/** The token of an Authorization header as Cube's clients send it: bare, or after `Bearer `. */
function tokenOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : header;
  return token.length <= MAX_TOKEN_LENGTH && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token) ? token : undefined;
}

const unauthorized = (message: string) => AppError.at('unauthorized', 'Authorization', message);

/**
 * The deployment a Cube JWT is for: the `x-svc-deployment-id` header (as an API key names one), else the token's
 * `deploymentId` claim (read before the signature is checked, only to know which secret checks it).
 */
function deploymentOf(token: string, header: string | undefined): number {
  let claim: unknown;
  try {
    claim = decodeJwt(token).deploymentId;
  } catch {
    throw unauthorized('the Authorization header is not a JWT');
  }
  const named = header ?? (typeof claim === 'number' || typeof claim === 'string' ? String(claim) : undefined);
  if (named === undefined) throw unauthorized(`invalid, expired or revoked credential in the Authorization header (a Cube JWT names its deployment: the ${DEPLOYMENT_HEADER} header or a deploymentId claim)`);
  if (!/^[1-9][0-9]{0,15}$/.test(named)) throw AppError.at('invalid_parameter', header !== undefined ? DEPLOYMENT_HEADER : 'deploymentId', 'a deployment id');
  return Number(named);
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Who a verified Cube JWT's claims make the caller, to the access policies. As Cube: the claims are the security
 * context, or the object under `u` (Cube's deprecated place). svc reads three claims of that context besides:
 * `groups` (the policies' groups), `embedTenantName` (`{embedTenant}`) and `userAttributes`.
 */
export function cubeJwtPrincipal(accountId: number, deploymentId: number, payload: JWTPayload): EmbedPrincipal {
  const context: Record<string, unknown> = isObject(payload.u) ? payload.u : payload;
  const { groups, embedTenantName, userAttributes } = context;
  if (groups !== undefined && !isStringArray(groups)) throw unauthorized('the token\'s groups claim must be an array of strings');
  if (embedTenantName !== undefined && typeof embedTenantName !== 'string') throw unauthorized('the token\'s embedTenantName claim must be a string');
  if (userAttributes !== undefined && !isObject(userAttributes)) throw unauthorized('the token\'s userAttributes claim must be an object');
  return {
    // An embed principal of no session: the policy step reads its access context and tenant, as a viewer's.
    kind: 'embed', accountId, deploymentId, sessionId: 0,
    embedTenantId: null, embedTenantName: embedTenantName ?? null, embedUserId: null, userId: null, userRole: null,
    access: { securityContext: context, userAttributes: userAttributes ?? {}, groups: groups ?? [], lockedFilters: {} },
    dashboards: [],
    tokenExpiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : null,
  };
}

/**
 * The caller of a Cube API request with a Cube JWT (`Authorization: <jwt>` or `Bearer <jwt>`), signed HS256 with
 * its deployment's Cube API secret: the algorithm pinned (no `none`, no RS/ES confusion), the signature compared in
 * constant time (jose's HMAC check), `exp` and `nbf` honoured. Undefined when the header is no JWT at all; a 401
 * naming the Authorization header when it is one svc does not accept.
 */
export async function resolveCubeJwt(ctx: CubeSecretContext, authorization: string | undefined, deploymentHeader: string | undefined): Promise<EmbedPrincipal | undefined> {
  const token = tokenOf(authorization);
  if (token === undefined) return undefined;
  const deploymentId = deploymentOf(token, deploymentHeader);
  const stored = await findCubeSecret(ctx.db, deploymentId);
  if (stored === undefined) throw unauthorized('invalid, expired or revoked credential in the Authorization header');
  const key = new TextEncoder().encode(ctx.sealer.open(stored.cube_secret));
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: ctx.now() });
    return cubeJwtPrincipal(stored.account_id, deploymentId, payload);
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (error instanceof errors.JWTExpired) throw unauthorized('the Cube token has expired');
    if (error instanceof errors.JOSEError) throw unauthorized('invalid, expired or revoked credential in the Authorization header');
    throw error;
  }
}
