import { defineConfig } from 'vite';

/**
 * The embed renders with Preact through preact/compat (issue 22: React 19 with react-dom/client alone is ~69 KB gzip,
 * Preact with compat about 10 KB). svc's code and its React libraries (react-grid-layout, @tanstack/react-virtual)
 * keep importing `react`: these aliases give them preact/compat. Exact matches only, so `react-grid-layout` and
 * `react-dom/client` are not caught by the `react` and `react-dom` rules.
 */
const PREACT_COMPAT = [
  { find: /^react$/, replacement: 'preact/compat' },
  { find: /^react-dom$/, replacement: 'preact/compat' },
  { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
  { find: /^react\/jsx-runtime$/, replacement: 'preact/compat/jsx-runtime' },
  { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/compat/jsx-dev-runtime' },
];

// Served by apps/server under /embed/ (index.html for every embed URL, hashed files under /embed/assets/).
export default defineConfig({
  base: '/embed/',
  resolve: { alias: PREACT_COMPAT },
  // svc's own JSX compiles to Preact's runtime directly (what tsconfig.json's jsxImportSource says too).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // No inline <script>: the page's CSP allows scripts from svc's origin only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
