import { defineConfig } from 'vite';

/** Where apps/server serves the console (index.html for every /console URL, hashed files under /console/assets/). */
const BASE = '/console/';

/**
 * The console (issue 34) is built like the embed (apps/embed/vite.config.ts): Preact, its JSX compiled to Preact's
 * runtime, no inline script (the page's CSP allows scripts from svc's origin only). It imports Preact's own API
 * (preact, preact/hooks), not React's; only the editor's grid (react-grid-layout) goes through preact/compat. The
 * workspace and the editor are chunks of their own (App.tsx imports them lazily): the sign-in page loads only what it
 * shows.
 */
/**
 * The editor's grid is react-grid-layout, a React library (as the embed's: apps/embed/vite.config.ts): these aliases
 * give it preact/compat. Exact matches only, so that `react-grid-layout` itself is not caught.
 */
const PREACT_COMPAT = [
  { find: /^react$/, replacement: 'preact/compat' },
  { find: /^react-dom$/, replacement: 'preact/compat' },
  { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
];

export default defineConfig({
  base: BASE,
  resolve: { alias: PREACT_COMPAT },
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
