import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Another spelling of the same token: the last base64url character of the signature carries spare bits (4 of an
 * Ed25519 signature's 86 characters, 2 of an HS256 one's 43), which decoders ignore. The signature's bytes, and so
 * its verification, are unchanged.
 */
function respell(token: string): string {
  const last = BASE64URL.indexOf(token.at(-1)!);
  return token.slice(0, -1) + BASE64URL[last ^ 1];
}

/**
 * Issue 18, an independent probe's finding 8 (info): an embed token has several spellings that verify. Nothing
 * keys on the spelling: a session is found, and revoked, by its session id. These tests pin that down, so that a
 * future cache keyed by the token's text cannot treat two spellings as two sessions (docs/security.md).
 */
describeEachDialect('embed token spellings', (t) => {
  for (const signer of ['EdDSA (the default)', 'HS256 (SVC_JWT_SECRET)'] as const) {
    describe(signer, () => {
      let app: FastifyInstance;
      let s: SeededAccount;

      beforeAll(async () => {
        app = await buildApp(testConfig({ jwtSecret: signer.startsWith('HS256') ? `secret-${uniqueSuffix()}-0123456789abcdef0123456789` : undefined }), { db: t().db });
        s = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
      });

      afterAll(async () => {
        await app.close();
      });

      const mint = async () => {
        const minted = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.alice!), payload: { deploymentId: s.refs.prod, externalId: `viewer-${uniqueSuffix()}` } });
        expect(minted.statusCode, minted.body).toBe(200);
        const sessionId = minted.json().sessionId as string;
        const exchanged = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } });
        expect(exchanged.statusCode, exchanged.body).toBe(200);
        return { sessionId, token: exchanged.json().token as string };
      };
      const current = (token: string) => app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${token}` } });

      it('a second spelling of a token verifies and names the same session', async () => {
        const { token } = await mint();
        const other = respell(token);
        expect(other).not.toBe(token);
        const [a, b] = [await current(token), await current(other)];
        expect(a.statusCode).toBe(200);
        expect(a.json().session).not.toBeNull();
        expect(b.json()).toEqual(a.json());
      });

      it('revoking the session refuses every spelling, whichever was seen first', async () => {
        const { sessionId, token } = await mint();
        const other = respell(token);
        // Both spellings held in memory as verified before the revocation.
        expect((await current(token)).json().session).not.toBeNull();
        expect((await current(other)).json().session).not.toBeNull();
        const revoked = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(s.keys.alice!), payload: { sessionId } });
        expect(revoked.statusCode, revoked.body).toBe(204);
        for (const spelling of [token, other, respell(other)]) {
          expect((await current(spelling)).json()).toEqual({ session: null });
          const refused = await app.inject({ url: `/api/v1/embed/deployments/${s.refs.prod}/workbooks/1/dashboard`, headers: { authorization: `Embed-Token ${spelling}` } });
          expect(refused.statusCode).toBe(401);
        }
      });

      it('a change to a signature bit that counts is refused', async () => {
        const { token } = await mint();
        const last = BASE64URL.indexOf(token.at(-1)!);
        // The highest bit the last character holds is a signature bit for both algorithms.
        const broken = token.slice(0, -1) + BASE64URL[last ^ 32];
        expect((await current(broken)).json()).toEqual({ session: null });
      });
    });
  }
});
