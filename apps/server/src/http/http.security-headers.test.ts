import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { APP_FRAME_CSP } from '../embed/embed.routes.js';

/** What every answer carries (issue 18, an independent probe's finding 7: API JSON lacked `nosniff`). */
const EVERYWHERE = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-permitted-cross-domain-policies': 'none',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'origin-agent-cluster': '?1',
  'cross-origin-opener-policy': 'same-origin',
};

describeEachDialect('security headers', (t) => {
  let s: SeededAccount;
  let publicId: string;

  beforeAll(async () => {
    publicId = `headers-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      settings: { allowedEmbedOrigins: ['https://host.example'] },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
  });

  describe('API answers', () => {
    it.each([
      ['a listing', 200, () => ({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: bearer(s.keys.alice!) })],
      ['a refusal', 401, () => ({ url: `/api/v1/deployments/${s.refs.prod}/workspace` })],
      ['an unknown route', 404, () => ({ url: '/api/v1/no-such-route' })],
      ['the OpenAPI document', 200, () => ({ url: '/api/v1/openapi.json' })],
    ] as const)('%s carries nosniff and the rest, resources for this origin only, and no CSP or X-Frame-Options', async (_name, status, request) => {
      const res = await t().app.inject(request());
      expect(res.statusCode).toBe(status);
      expect(res.headers).toMatchObject({ ...EVERYWHERE, 'cross-origin-resource-policy': 'same-origin' });
      expect(res.headers['x-frame-options']).toBeUndefined();
      expect(res.headers['strict-transport-security']).toBeUndefined();
    });
  });

  describe('the embed pages keep their own policy', () => {
    it('a dashboard page: its own CSP naming the host origins as frame ancestors, no X-Frame-Options, no CORP, no Origin-Agent-Cluster', async () => {
      const res = await t().app.inject({ url: `/embed/dashboard/${publicId}` });
      expect(res.statusCode).toBe(200);
      const { 'origin-agent-cluster': _asked, ...embedPage } = EVERYWHERE;
      expect(res.headers).toMatchObject(embedPage);
      // Issue 22: `?1` made Chromium wait for a process of the origin's own before it started the embed's document.
      expect(res.headers['origin-agent-cluster']).toBeUndefined();
      expect(String(res.headers['content-security-policy'])).toMatch(/(?:^|; )frame-ancestors https:\/\/host\.example(?:;|$)/);
      expect(res.headers['x-frame-options']).toBeUndefined();
      expect(res.headers['cross-origin-resource-policy']).toBeUndefined();
    });

    it('the app frame: its sandbox policy unchanged', async () => {
      const res = await t().app.inject({ url: '/embed/app-frame' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toBe(APP_FRAME_CSP);
      expect(res.headers['x-frame-options']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    });
  });
});
