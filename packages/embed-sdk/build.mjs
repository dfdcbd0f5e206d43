// Bundles the SDK (with @svc/protocol inlined: zero runtime dependencies) as ESM and CJS, the React component
// (react external: the host's own; the core bundled in), and the two files svc serves for a page without a bundler
// (apps/server/src/embed/embed.sdk.ts): minified ESM (`/sdk/embed-sdk.js`) and an IIFE for a plain <script> tag
// that defines the global `SvcEmbed` (`/sdk/embed-sdk.iife.js`). Declarations come from dts-bundle-generator.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { name, version, license } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8'));
const common = { bundle: true, platform: 'browser', target: 'es2022', sourcemap: true, logLevel: 'warning' };
for (const [entry, file, external] of [['src/index.ts', 'index', []], ['src/react.ts', 'react', ['react']]]) {
  for (const format of ['esm', 'cjs']) {
    await build({ ...common, entryPoints: [entry], format, external, outfile: `dist/${file}.${format === 'esm' ? 'js' : 'cjs'}` });
  }
}
// What the served files are is said in their first line, so a copy found in a page's sources tells its version.
const browser = { ...common, entryPoints: ['src/index.ts'], minify: true, sourcemap: false, banner: { js: `/*! ${name} ${version} | ${license} */` } };
await build({ ...browser, format: 'esm', outfile: 'dist/browser/embed-sdk.js' });
await build({ ...browser, format: 'iife', globalName: 'SvcEmbed', outfile: 'dist/browser/embed-sdk.iife.js' });
