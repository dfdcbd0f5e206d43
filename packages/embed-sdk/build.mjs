// Bundles the SDK (with @svc/protocol inlined: zero runtime dependencies) as ESM and CJS, plus a minified ESM
// file for size measurement. Declarations come from tsc (tsconfig.json).
import { build } from 'esbuild';

const common = { entryPoints: ['src/index.ts'], bundle: true, platform: 'browser', target: 'es2022', sourcemap: true, logLevel: 'warning' };
await build({ ...common, format: 'esm', outfile: 'dist/index.js' });
await build({ ...common, format: 'cjs', outfile: 'dist/index.cjs' });
await build({ ...common, format: 'esm', minify: true, sourcemap: false, outfile: 'dist/index.min.js' });
