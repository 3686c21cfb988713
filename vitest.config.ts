import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Every test file runs twice: on an embedded in-memory PGlite and on a fresh
// PostgreSQL database created for the run (test/setup/postgres.ts).
export default defineConfig({
  // Node loads graphql's CommonJS build for every package; make our own sources use
  // the same copy instead of Vite picking the ESM one ("module" field).
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    // Test files spend most of their time waiting on PostgreSQL, sockets and child processes,
    // so two run at once even on a 2-core machine (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A worker runs its files one after another on the same loaded modules: the schema, Prisma's
    // client and the app's code are loaded once per worker, not once per file (most of a file's
    // cost otherwise). Nothing in src/ keeps state at module level; a file that changes a module's
    // state (the schema builder) loads its own copies (vi.resetModules) and drops them after.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'pglite', provide: { dbKind: 'pglite' }, globalSetup: ['test/setup/pglite.ts'] } },
      {
        extends: true,
        test: { name: 'postgres', provide: { dbKind: 'postgres' }, globalSetup: ['test/setup/postgres.ts'] },
      },
    ],
  },
});
