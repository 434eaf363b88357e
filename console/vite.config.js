import { defineConfig } from 'vite';

// The console is served at <api>/console/ and built into the Go package
// that embeds it. Relative asset URLs keep it working behind an API
// Gateway stage or a custom domain's base path; no module-preload
// polyfill, so the page runs no inline script (see the CSP in
// internal/console).
export default defineConfig({
  base: './',
  build: {
    outDir: '../internal/console/dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    assetsInlineLimit: 0,
  },
});
