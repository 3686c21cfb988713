import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/app.js';
import { diffDatabaseAgainstSchema } from '../helpers/schema-diff.js';
import { freshDatabase } from '../helpers/fresh-database.js';
import { migrate } from '../../src/db/migrate.js';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.close());

describe('the migrated database', () => {
  it('matches prisma/schema.prisma: tables, columns, enums, indexes (partial ones included) and foreign keys', async () => {
    const differences = await db.withSession((session) => diffDatabaseAgainstSchema(session));
    expect(differences).toEqual([]);
  });

  it('is reported as different when it drifts from the schema', async () => {
    // A database of its own: DDL on the shared run database would lock out the other test files.
    const fresh = await freshDatabase();
    const differences = await fresh.db
      .withSession(async (session) => {
        await migrate(session);
        await session.exec(`
          DROP INDEX contacts_workspace_email_live_key;
          CREATE UNIQUE INDEX contacts_workspace_email_live_key ON contacts (workspace_id, email_normalized);
          ALTER TABLE contacts ALTER COLUMN name DROP NOT NULL;
          ALTER TABLE messages ALTER COLUMN last_error TYPE varchar(512);
          DROP INDEX contact_phones_contact_id_idx;
          ALTER TABLE workspaces ADD COLUMN stray text;`);
        return diffDatabaseAgainstSchema(session);
      })
      .finally(() => fresh.drop());
    expect(differences).toEqual(
      expect.arrayContaining([
        'column contacts.name is nullable, schema says required',
        'column messages.last_error is varchar(512), schema says varchar(1024)',
        'column workspaces.stray is not in the schema',
        'index contact_phones_contact_id_idx on contact_phones(contact_id) is missing',
        'index contacts_workspace_email_live_key has predicate (none), schema says deleted_at IS NULL',
      ]),
    );
    expect(differences).toHaveLength(5);
  });

  it('enforces the partial unique indexes the model relies on', async () => {
    const rows = await db.withSession((session) =>
      session.query<{ name: string; def: string }>(
        `SELECT indexname AS name, indexdef AS def FROM pg_indexes
          WHERE indexname IN ('contacts_workspace_email_live_key', 'contact_phones_workspace_number_live_key', 'conversations_one_open_key')
          ORDER BY indexname`,
      ),
    );
    expect(rows.map((r) => r.name)).toEqual([
      'contact_phones_workspace_number_live_key',
      'contacts_workspace_email_live_key',
      'conversations_one_open_key',
    ]);
    for (const row of rows) expect(row.def).toMatch(/^CREATE UNIQUE INDEX .* WHERE /);
  });
});
