import { defineConfig } from 'vite';
import type { HtmlTagDescriptor, Plugin } from 'vite';

/** Where apps/server serves the embed (index.html for every embed URL, hashed files under /embed/assets/). */
const BASE = '/embed/';

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

/**
 * `<link rel="prefetch">` for the chunks of `names` (dynamic imports, by their chunk name), the chunks they import
 * and their stylesheets, but those the page loads anyway. main.tsx runs the dashboard's chunk only after `ready` (issue 22): a
 * prefetch brings the file into the HTTP cache meanwhile, without parsing or running it, so that a viewer's first
 * visit does not wait for its download after `ready`.
 */
function prefetchChunks(names: readonly string[]): Plugin {
  return {
    name: 'svc-prefetch-chunks',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, { bundle }) {
        if (bundle === undefined) return [];
        const chunks = Object.values(bundle).flatMap((output) => (output.type === 'chunk' ? [output] : []));
        const loaded = new Set<string>();
        const closure = (fileName: string, into: Set<string>) => {
          const chunk = bundle[fileName];
          if (chunk?.type !== 'chunk' || into.has(fileName)) return;
          into.add(fileName);
          for (const imported of chunk.imports) closure(imported, into);
          for (const css of chunk.viteMetadata?.importedCss ?? []) into.add(css);
        };
        for (const chunk of chunks) if (chunk.isEntry) closure(chunk.fileName, loaded);
        const prefetched = new Set<string>();
        for (const chunk of chunks) if (chunk.isDynamicEntry && names.includes(chunk.name)) closure(chunk.fileName, prefetched);
        return [...prefetched].filter((fileName) => !loaded.has(fileName)).map((fileName): HtmlTagDescriptor => ({
          tag: 'link', attrs: { rel: 'prefetch', crossorigin: true, href: `${BASE}${fileName}` }, injectTo: 'head',
        }));
      },
    },
  };
}

export default defineConfig({
  base: BASE,
  resolve: { alias: PREACT_COMPAT },
  // svc's own JSX compiles to Preact's runtime directly (what tsconfig.json's jsxImportSource says too).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [prefetchChunks(['Dashboard'])],
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
