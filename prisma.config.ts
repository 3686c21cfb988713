import { defineConfig } from 'prisma/config';

// The CLI reads the database only for `prisma migrate status/deploy`, where the
// native schema engine is available. The server and `npm run db:migrate` apply
// migrations with the project's own runner (src/db/migrate.ts).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
