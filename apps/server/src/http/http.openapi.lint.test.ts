import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { NormalizedProblem } from '@redocly/openapi-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';

// Issue 22 item 8: the document svc serves passes Redocly's `recommended` ruleset (the rules `redocly lint` applies
// by default) without an error or a warning. The document does not depend on the database, so one dialect serves.

/** One line per problem: severity, rule, message and where, so a failure says what to fix. */
const describeProblems = (problems: NormalizedProblem[]) =>
  problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`);

describe("the OpenAPI document under Redocly's recommended rules", () => {
  let db: Db;
  let app: FastifyInstance;
  let source: string;

  beforeAll(async () => {
    db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    app = await buildApp(testConfig(), { db });
    source = (await app.inject({ url: '/api/v1/openapi.json' })).body;
  });

  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('has no error and no warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
    expect(describeProblems(problems)).toEqual([]);
  });

  it('would report a document that breaks the rules (the lint is not a no-op)', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const broken = JSON.parse(source) as { servers?: unknown; tags: Array<{ description?: string }> };
    delete broken.servers;
    delete broken.tags[0]!.description;
    const rules = (await lintFromString({ source: JSON.stringify(broken), absoluteRef: 'openapi.json', config })).map((p) => `${p.severity} ${p.ruleId}`);
    expect(rules).toEqual(expect.arrayContaining(['error no-empty-servers', 'warn tag-description']));
  });
});
