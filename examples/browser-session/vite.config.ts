import { defineConfig } from 'vite';

// `npx vite build examples/browser-session` writes the page to examples/browser-session/dist,
// which server.ts serves. Everything is bundled: the page loads nothing from elsewhere.
export default defineConfig({
  base: './',
  logLevel: 'warn',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
