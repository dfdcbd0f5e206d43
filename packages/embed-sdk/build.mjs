// Bundles the SDK (with @svc/protocol inlined: zero runtime dependencies) as ESM and CJS, the React component
// (react external: the host's own; the core bundled in), and a minified ESM file for size measurement. Declarations come from tsc.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'browser', target: 'es2022', sourcemap: true, logLevel: 'warning' };
for (const [entry, name, external] of [['src/index.ts', 'index', []], ['src/react.ts', 'react', ['react']]]) {
  for (const format of ['esm', 'cjs']) {
    await build({ ...common, entryPoints: [entry], format, external, outfile: `dist/${name}.${format === 'esm' ? 'js' : 'cjs'}` });
  }
}
await build({ ...common, entryPoints: ['src/index.ts'], format: 'esm', minify: true, sourcemap: false, outfile: 'dist/index.min.js' });
