import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npx vite build examples/web-inbox` writes the page to examples/web-inbox/dist, which
// server.ts serves; `server.ts` in dev mode runs Vite's dev server instead. Everything is
// bundled: the page loads nothing from elsewhere.
export default defineConfig({
  base: './',
  logLevel: 'warn',
  plugins: [react()],
  // The repository's node_modules, not one under this directory.
  cacheDir: '../../node_modules/.vite/web-inbox',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
