import { defineConfig } from 'vitest/config';

// Every test file runs twice: on an embedded in-memory PGlite and on a fresh
// PostgreSQL database created for the run (test/setup/postgres.ts).
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    include: ['test/**/*.test.ts'],
    projects: [
      { extends: true, test: { name: 'pglite', provide: { dbKind: 'pglite' } } },
      {
        extends: true,
        test: { name: 'postgres', provide: { dbKind: 'postgres' }, globalSetup: ['test/setup/postgres.ts'] },
      },
    ],
  },
});
