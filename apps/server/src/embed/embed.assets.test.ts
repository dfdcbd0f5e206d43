import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { EMBED_DIST } from './embed.routes.js';

/**
 * Issue 18 (an independent probe's finding 7): the embed's source maps hold its whole source; they are served only
 * when SVC_EMBED_SOURCE_MAPS asks for them. The built runtime (npm run build) is what is served.
 */
describeEachDialect('embed assets', (t) => {
  const assets = readdirSync(join(EMBED_DIST, 'assets'));
  const script = assets.find((name) => name.endsWith('.js') && assets.includes(`${name}.map`))!;
  let withMaps: FastifyInstance;

  beforeAll(async () => {
    withMaps = await buildApp(testConfig({ embedSourceMaps: true }), { db: t().db });
  });

  afterAll(async () => {
    await withMaps.close();
  });

  it('serves the scripts, with a year of caching', async () => {
    expect(script, 'npm run build wrote a script with its map').toBeDefined();
    const res = await t().app.inject({ url: `/embed/assets/${script}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toContain('immutable');
  });

  it('answers 404 in the error body for a source map by default', async () => {
    const res = await t().app.inject({ url: `/embed/assets/${script}.map` });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { status: 404, code: 'not_found' } });
    expect(res.body).not.toContain('sourcesContent');
  });

  it('serves the source maps when SVC_EMBED_SOURCE_MAPS is on', async () => {
    const res = await withMaps.inject({ url: `/embed/assets/${script}.map` });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ version: 3, sources: expect.any(Array) });
  });
});
