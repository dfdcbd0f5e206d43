import { defineConfig } from 'vite';

/** Where apps/server serves the console (index.html for every /console URL, hashed files under /console/assets/). */
const BASE = '/console/';

/**
 * The console (issue 34) is built like the embed (apps/embed/vite.config.ts): Preact, its JSX compiled to Preact's
 * runtime, no inline script (the page's CSP allows scripts from svc's origin only). It imports Preact's own API
 * (preact, preact/hooks), not React's, so it needs no preact/compat alias. The workspace is its own chunk
 * (main.tsx imports it lazily): the sign-in page loads only what it shows.
 */
export default defineConfig({
  base: BASE,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
