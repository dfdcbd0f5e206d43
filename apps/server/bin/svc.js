#!/usr/bin/env node
// The `svc` command. `npm install` builds dist/ (the root package's prepare script).
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  },
);
