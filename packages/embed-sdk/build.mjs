// Bundles the SDK (with @svc/protocol inlined: zero runtime dependencies) as ESM and CJS, its tools entry (what a
// typical page does not need: `@svc/embed-sdk/tools`), the React component
// (react external: the host's own; the core bundled in), and the two files svc serves for a page without a bundler
// (apps/server/src/embed/embed.sdk.ts): minified ESM (`/sdk/embed-sdk.js`) and an IIFE for a plain <script> tag
// that defines the global `SvcEmbed` (`/sdk/embed-sdk.iife.js`). Declarations come from dts-bundle-generator.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { name, version, license } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8'));
const common = { bundle: true, platform: 'browser', target: 'es2022', sourcemap: true, logLevel: 'warning' };
// The tools entry takes SvcEmbedError from the main entry, not a copy of its own: an error its SessionRenewal makes is
// an instance of the class a host imports from '@svc/embed-sdk'.
const errorsFromMain = (format, filter = /^\.\/errors\.js$/) => ({
  name: 'errors-from-main',
  setup(b) {
    b.onResolve({ filter }, () => ({ path: `./index.${format === 'esm' ? 'js' : 'cjs'}`, external: true }));
  },
});
// The explore entry (issue 35) takes embed() from the main entry the same way.
for (const [entry, file, external] of [['src/index.ts', 'index', []], ['src/tools.ts', 'tools', []], ['src/explore.ts', 'explore', []], ['src/react.ts', 'react', ['react']]]) {
  for (const format of ['esm', 'cjs']) {
    const plugins = file === 'tools' ? [errorsFromMain(format)] : file === 'explore' ? [errorsFromMain(format, /^\.\/(errors|embed)\.js$/)] : [];
    await build({ ...common, entryPoints: [entry], format, external, plugins, outfile: `dist/${file}.${format === 'esm' ? 'js' : 'cjs'}` });
  }
}
// What the served files are is said in their first line, so a copy found in a page's sources tells its version.
const browser = { ...common, entryPoints: ['src/browser.ts'], minify: true, sourcemap: false, banner: { js: `/*! ${name} ${version} | ${license} */` } };
await build({ ...browser, format: 'esm', outfile: 'dist/browser/embed-sdk.js' });
await build({ ...browser, format: 'iife', globalName: 'SvcEmbed', outfile: 'dist/browser/embed-sdk.iife.js' });
