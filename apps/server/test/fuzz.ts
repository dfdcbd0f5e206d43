// The fuzz engine of issue 8 (hardening): requests derived from the OpenAPI document svc serves, plus hand-written
// nasty ones, each checked against DESIGN.md's promises: no 5xx, every 4xx in the error body, nothing written by a
// refused request, and a server that still answers afterwards. Shared by apps/server/src/http/http.fuzz.test.ts
// (a bounded number of cases in CI) and bench/fuzz/fuzz.bench.ts (100,000 cases).
//
// This file is the entry; the engine is split by idea:
//   fuzz.types.ts     operations, requests, problems and reports
//   fuzz.encoding.ts  values written as JSON text and percent-encoded URL parts
//   fuzz.schemas.ts   the OpenAPI document: operations, arbitraries of values from schemas, body verdicts
//   fuzz.fixtures.ts  seeded accounts, real rows and credentials to run against
//   fuzz.requests.ts  generated requests of an operation
//   fuzz.cases.ts     hand-written nasty cases (bodies, parameters, stray routes, raw socket bytes)
//   fuzz.checks.ts    answer checks and database snapshots
//   fuzz.harness.ts   svc built for fuzzing: sending, checking, reporting

export type { FuzzOperation, FuzzParameter, FuzzProblem, FuzzReport, FuzzRequest, JsonSchema } from './fuzz.types.js';
export { RawJson, percentEncode, toJsonText } from './fuzz.encoding.js';
export { METACHARACTER_STRINGS, bodyVerdict, breakingValue, mutatedValue, operationsOf, readOperations, validValue } from './fuzz.schemas.js';
export type { Hints } from './fuzz.schemas.js';
export { seedFuzzFixtures } from './fuzz.fixtures.js';
export type { Exemplar, FuzzFixtures } from './fuzz.fixtures.js';
export { requestArbitrary } from './fuzz.requests.js';
export { deeplyNested, nastyRequests, rawRequests, strayRequests } from './fuzz.cases.js';
export { answerProblems, diffSnapshots, errorBodyProblem, snapshotDatabase } from './fuzz.checks.js';
export type { DatabaseSnapshot } from './fuzz.checks.js';
export { FuzzHarness, describeRequest, formatProblems, seedFor, sendRaw } from './fuzz.harness.js';
export type { FuzzAnswer, FuzzHarnessOptions } from './fuzz.harness.js';
