/**
 * `npm run bench -- <name> [options]`: runs one benchmark of bench/ and records its figures.
 */
const benchmarks: Record<string, () => Promise<{ main(args: string[]): Promise<void> }>> = {
  workspace: () => import('./workspace/workspace.bench.js'),
  sessions: () => import('./sessions/sessions.bench.js'),
  sdk: () => import('./sdk/sdk.bench.js'),
  comments: () => import('./comments/comments.bench.js'),
  embed: () => import('./embed/embed.bench.js'),
  data: () => import('./data/data.bench.js'),
  fuzz: () => import('./fuzz/fuzz.bench.js'),
  soak: () => import('./soak/soak.bench.js'),
  // Issue 36: Cube's REST API `load` against the widget endpoint.
  cube: () => import('./cube/cube.bench.js'),
};

const [name, ...args] = process.argv.slice(2);
const load = name === undefined ? undefined : benchmarks[name];
if (load === undefined) {
  console.error(`usage: npm run bench -- <${Object.keys(benchmarks).join('|')}> [options]`);
  process.exitCode = 1;
} else {
  await (await load()).main(args);
}
