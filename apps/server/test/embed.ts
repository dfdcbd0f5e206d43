import type { FastifyInstance } from 'fastify';
import { uniqueSuffix } from './factory.js';

export interface ViewerSession {
  /** `Authorization: Embed-Token <token>`. */
  headers: { authorization: string };
  token: string;
  /** The embed user's id (the `userId` of their comments). */
  embedUserId: number;
}

/**
 * A viewer's embed token through the real flow: Generate Session with an admin's API key, then the exchange.
 * `body` adds Generate Session fields (`externalId`, `embedTenantName`, `username`, `email`, `internalId`...);
 * without `externalId` or `internalId`, a fresh externalId is made up.
 *
 * @example
 * const ann = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod, embedTenantName: 'customer-a' });
 * await app.inject({ url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: ann.headers });
 */
export async function mintViewer(app: FastifyInstance, adminKey: string, body: Record<string, unknown> & { deploymentId: number }): Promise<ViewerSession> {
  const identity = body.externalId === undefined && body.internalId === undefined ? { externalId: `viewer-${uniqueSuffix()}` } : {};
  const minted = await app.inject({
    method: 'POST', url: '/api/v1/embed/generate-session', headers: { authorization: `Bearer ${adminKey}` }, payload: { ...identity, ...body },
  });
  if (minted.statusCode !== 200) throw new Error(`generate-session answered ${minted.statusCode}: ${minted.body}`);
  const exchanged = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: minted.json().sessionId } });
  if (exchanged.statusCode !== 200) throw new Error(`session/token answered ${exchanged.statusCode}: ${exchanged.body}`);
  const token = exchanged.json().token as string;
  const current = await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${token}` } });
  const embedUserId = current.json().session?.embedUserId as number;
  return { headers: { authorization: `Embed-Token ${token}` }, token, embedUserId };
}

/**
 * mintViewer over HTTP, against a running svc at `base` (a `svc serve` process): Generate Session, the exchange, and
 * the current session for the embed user's id; throws on an answer that is not 200.
 *
 * @example
 * const ann = await mintViewerOverHttp(server.url, adminKey, { deploymentId, embedTenantName: 'customer-a' });
 * await fetch(`${server.url}/api/v1/embed/dashboard/${publicId}/comments`, { headers: ann.headers });
 */
export async function mintViewerOverHttp(base: string, adminKey: string, body: Record<string, unknown> & { deploymentId: number }): Promise<ViewerSession> {
  const identity = body.externalId === undefined && body.internalId === undefined ? { externalId: `viewer-${uniqueSuffix()}` } : {};
  const post = (path: string, headers: Record<string, string>, payload: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  const minted = await post('/api/v1/embed/generate-session', { authorization: `Bearer ${adminKey}` }, { ...identity, ...body });
  if (minted.status !== 200) throw new Error(`generate-session answered ${minted.status}: ${await minted.text()}`);
  const exchanged = await post('/api/v1/embed/session/token', {}, { sessionId: ((await minted.json()) as { sessionId: string }).sessionId });
  if (exchanged.status !== 200) throw new Error(`session/token answered ${exchanged.status}: ${await exchanged.text()}`);
  const { token } = (await exchanged.json()) as { token: string };
  const headers = { authorization: `Embed-Token ${token}` };
  const current = (await (await fetch(`${base}/api/v1/embed/session`, { headers })).json()) as { session: { embedUserId: number } };
  return { headers, token, embedUserId: current.session.embedUserId };
}
