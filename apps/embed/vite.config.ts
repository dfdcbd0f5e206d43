import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by apps/server under /embed/ (index.html for every embed URL, hashed files under /embed/assets/).
export default defineConfig({
  base: '/embed/',
  plugins: [react()],
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
