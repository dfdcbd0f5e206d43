/**
 * Runs the `svc` command from the TypeScript source, for tests: `node --import tsx apps/server/test/cli-runner.ts ...`.
 * The published bin (bin/svc.js) runs the compiled dist/, which may be stale while the source changes. Like the
 * bin, it prints an unexpected error's message (never a stack trace) and exits 1.
 */
import { main } from '../src/cli.js';

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
