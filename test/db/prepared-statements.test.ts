import { describe, expect, inject, it } from 'vitest';
import { createTestApp, onPostgres } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';
import { openDatabase, PLAN_FOR_ANY_VALUE, preparedStatementNames } from '../../src/db/database.js';

describe('the names of prepared statements', () => {
  it('one name per distinct text, none for a plan that depends on the value searched for, none past the limit', () => {
    const name = preparedStatementNames(3);
    const first = name({ sql: 'SELECT id FROM contacts WHERE id = $1' });
    expect(first).toMatch(/^connect_/);
    expect(name({ sql: 'SELECT id FROM contacts WHERE id = $1' })).toBe(first);
    const second = name({ sql: 'SELECT id FROM contacts WHERE email = $1' });
    expect(second).toMatch(/^connect_/);
    expect(second).not.toBe(first);
    expect(name({ sql: 'SELECT id FROM contacts WHERE name ILIKE $1' })).toBeUndefined();
    expect(name({ sql: 'SELECT id FROM contacts WHERE phone LIKE $1' })).toBeUndefined();
    expect(name({ sql: `SELECT id FROM messages WHERE search_vector @@ plainto_tsquery('simple', $1)` })).toBeUndefined();
    // The limit counts every text seen, named or not.
    expect(name({ sql: 'SELECT 4' })).toBeUndefined();
    expect(name({ sql: 'SELECT id FROM contacts WHERE id = $1' })).toBe(first);
  });

  it('a search that says one plan serves every term is named', () => {
    const name = preparedStatementNames();
    const matches = `SELECT conversation_id FROM messages WHERE search_vector @@ plainto_tsquery('simple', $1)`;
    expect(name({ sql: `SELECT id FROM conversations WHERE id IN (${matches})` })).toBeUndefined();
    expect(name({ sql: `SELECT id FROM conversations WHERE ${PLAN_FOR_ANY_VALUE} id = ANY(ARRAY(${matches}))` })).toMatch(/^connect_/);
  });
});

describe.skipIf(!onPostgres)('prepared statements on PostgreSQL', () => {
  /** The app on a one-connection pool, and the statements that connection holds prepared. */
  async function appOnOneConnection(preparedStatements?: boolean) {
    const db = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 1, preparedStatements });
    const app = await createTestApp({}, db);
    const prepared = () =>
      db.withSession((session) => session.query<{ statement: string; generic_plans: string }>(`SELECT statement, generic_plans FROM pg_prepared_statements`));
    return { app, prepared };
  }

  it('keeps the hot statements prepared on their connection, and answers the same from them', async () => {
    const { app, prepared } = await appOnOneConnection();
    try {
      const s = await messagingSetup(app);
      const c = await s.contact({ email: 'prepared@example.com' });
      for (const name of ['First', 'Second', 'Third', 'Fourth', 'Fifth', 'Sixth', 'Seventh']) {
        const updated = await s.api.patch(`/contacts/${c.id}`, { name });
        expect(updated.status).toBe(200);
        expect(updated.body.data.contact.name).toBe(name);
      }
      const statements = (await prepared()).map((row) => row.statement);
      expect(statements.some((sql) => /WITH previous AS/.test(sql) && /UPDATE contacts/.test(sql))).toBe(true);
      // A search is planned for its term every time.
      expect((await s.api.get('/contacts?search=prep')).body.data).toHaveLength(1);
      expect((await prepared()).some((row) => /ILIKE/.test(row.statement))).toBe(false);
      // The inbox's search is written so that one plan serves every term, and is kept prepared: after its
      // first five runs PostgreSQL runs it by its generic plan, whatever the term, instead of planning it afresh.
      for (const term of ['prep', 'prepared', 'example', 'nothing', 'first', 'second', 'third']) {
        expect((await s.api.get(`/conversations?search=${term}`)).status).toBe(200);
      }
      const search = (await prepared()).find((row) => row.statement.includes(PLAN_FOR_ANY_VALUE) && /@@/.test(row.statement));
      expect(search).toBeDefined();
      expect(Number(search!.generic_plans)).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it('keeps a statement run through execute (the webhooks’ store) prepared as well', async () => {
    const db = await openDatabase({ databaseUrl: inject('databaseUrl'), poolSize: 1 });
    try {
      const sql = `UPDATE workspaces SET updated_at = updated_at WHERE id = $1::uuid`;
      expect(await db.execute(sql, ['00000000-0000-7000-8000-000000000000'])).toBe(0);
      const statements = await db.withSession((session) => session.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements`));
      expect(statements.map((row) => row.statement)).toContain(sql);
    } finally {
      await db.close();
    }
  });

  it('prepares nothing with DB_PREPARED_STATEMENTS=0', async () => {
    const { app, prepared } = await appOnOneConnection(false);
    try {
      const s = await messagingSetup(app);
      const c = await s.contact({ email: 'unprepared@example.com' });
      expect((await s.api.patch(`/contacts/${c.id}`, { name: 'Renamed' })).status).toBe(200);
      expect(await prepared()).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
