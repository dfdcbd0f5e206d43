import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * Request bytes and parameters as sent (issue 18, an independent probe's findings 4 and 6): a JSON body must be
 * UTF-8, never repaired to U+FFFD, and an integer in a path or query string has one spelling.
 */
describeEachDialect('request validation', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let publicId: string;
  let ann: ViewerSession;

  beforeAll(async () => {
    app = t().app;
    const suffix = uniqueSuffix();
    publicId = `validation-${suffix}`;
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    ann = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a' });
  });

  const commentsUrl = () => `/api/v1/embed/dashboard/${publicId}/comments`;
  const json = (text: string) => Buffer.concat([Buffer.from('{"body":"'), Buffer.from(text, 'latin1'), Buffer.from('"}')]);
  const embedUsers = async (prefix: string) => t().db.kysely.selectFrom('embed_users').select('external_id').where('external_id', 'like', `${prefix}%`).execute();

  describe('a JSON body is UTF-8', () => {
    it.each([
      ['a lone continuation byte', 'coll\x80'],
      ['0xFF', 'coll\xff'],
      ['a truncated two-byte sequence', 'coll\xc3'],
      ['an overlong encoding of "/"', '\xc0\xaf'],
      ['a UTF-16 surrogate encoded as UTF-8', '\xed\xa0\x80'],
    ])('refuses %s with a 400 naming the body, and writes nothing', async (_name, bytes) => {
      const before = await t().db.kysely.selectFrom('comments').select(({ fn }) => fn.countAll<number>().as('n')).where('embed_user_id', '=', ann.embedUserId).executeTakeFirstOrThrow();
      const res = await app.inject({ method: 'POST', url: commentsUrl(), headers: { ...ann.headers, 'content-type': 'application/json' }, payload: json(bytes) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: { status: 400, code: 'invalid_body', message: expect.stringMatching(/^request body is not valid UTF-8/) } });
      const after = await t().db.kysely.selectFrom('comments').select(({ fn }) => fn.countAll<number>().as('n')).where('embed_user_id', '=', ann.embedUserId).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });

    it('keeps externalIds that differ only in invalid bytes apart: each is refused, none becomes an embed user', async () => {
      const prefix = `coll-${uniqueSuffix()}`;
      for (const tail of ['\xff', '\xfe', '\xc3']) {
        const payload = Buffer.concat([Buffer.from(`{"deploymentId":${s.refs.prod},"externalId":"${prefix}`), Buffer.from(tail, 'latin1'), Buffer.from('"}')]);
        const res = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: { ...bearer(s.keys.alice!), 'content-type': 'application/json' }, payload });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error.code).toBe('invalid_body');
      }
      expect(await embedUsers(prefix)).toEqual([]);
    });

    it('stores a body of every UTF-8 length verbatim (1 to 4 bytes a character)', async () => {
      const text = `caf\u00e9 \u2713 \u{1F600} ${uniqueSuffix()}`;
      const res = await app.inject({ method: 'POST', url: commentsUrl(), headers: { ...ann.headers, 'content-type': 'application/json' }, payload: Buffer.from(JSON.stringify({ body: text }), 'utf8') });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().body).toBe(text);
      const stored = await t().db.kysely.selectFrom('comments').select('body').where('id', '=', res.json().id).executeTakeFirstOrThrow();
      expect(stored.body).toBe(text);
    });
  });

  describe('an integer parameter has one spelling', () => {
    it.each(['0x180', '385e0', '+387', '%20386', '0388', '386%20', '1.0', '-0'])('refuses the comment id %s with a 400 naming params commentId', async (spelling) => {
      const res = await app.inject({ method: 'DELETE', url: `${commentsUrl()}/${spelling}`, headers: ann.headers });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: { status: 400, code: 'invalid_parameter', field: 'commentId', message: expect.stringContaining('params commentId') } });
    });

    it('still addresses a comment by its canonical id', async () => {
      const posted = await app.inject({ method: 'POST', url: commentsUrl(), headers: ann.headers, payload: { body: 'to be edited' } });
      expect(posted.statusCode).toBe(201);
      const id = posted.json().id as number;
      const padded = await app.inject({ method: 'PATCH', url: `${commentsUrl()}/0${id}`, headers: ann.headers, payload: { body: 'by a padded id' } });
      expect(padded.statusCode).toBe(400);
      const edited = await app.inject({ method: 'PATCH', url: `${commentsUrl()}/${id}`, headers: ann.headers, payload: { body: 'edited' } });
      expect(edited.statusCode, edited.body).toBe(200);
      expect(edited.json().body).toBe('edited');
    });

    it.each(['0x1', '+1', '01'])('refuses the deployment id %s in the workspace listing', async (spelling) => {
      const res = await app.inject({ url: `/api/v1/deployments/${spelling}/workspace`, headers: bearer(s.keys.alice!) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_parameter', field: 'deploymentId' });
    });

    it.each(['0x10', '+5', '05', '5e0'])('refuses the query parameter first=%s', async (spelling) => {
      const res = await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace?first=${spelling}`, headers: bearer(s.keys.alice!) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_parameter', field: 'first' });
    });
  });

});
