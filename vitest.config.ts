import { defineConfig } from 'vitest/config';

// SVC_TEST_REPORT (set by .ci/run) adds a JSON report from which CI prints its "N passed, N failed" line.
const report = process.env.SVC_TEST_REPORT;

export default defineConfig({
  test: {
    include: ['apps/**/src/**/*.test.ts', 'packages/**/src/**/*.test.ts', 'e2e/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'],
    globalSetup: ['apps/server/test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: report ? ['default', ['json', { outputFile: report }]] : ['default'],
  },
});
