import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { createTestApp, onPostgres, type TestApp } from '../helpers/app.js';
import { messagingSetup } from '../helpers/messaging.js';

/**
 * An app on a database of its own whose message inserts sleep `seconds` when the
 * body is `slow`: a statement far slower than any request should be.
 */
async function appWithSlowInsert(timeouts: { statementTimeoutMs?: number; transactionTimeoutMs?: number }, seconds: number) {
  const database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_timeouts');
  const db = await openDatabase({ databaseUrl: database.url, poolSize: 4, ...timeouts });
  await db.withSession(async (session) => {
    await migrate(session);
    await session.exec(`
      CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.body = 'slow' THEN PERFORM pg_sleep(${seconds}); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER slow_insert BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION slow_insert();`);
  });
  const app = await createTestApp({}, db);
  return { app, drop: async () => (await app.close(), await database.drop()) };
}

async function expectRolledBack500(app: TestApp, maxMs: number) {
  const s = await messagingSetup(app);
  const counts = async () => [
    await app.db.prisma.contact.count({ where: { workspaceId: s.workspace.id } }),
    await app.db.prisma.conversation.count({ where: { workspaceId: s.workspace.id } }),
    await app.db.prisma.message.count({ where: { workspaceId: s.workspace.id } }),
  ];
  const before = await counts();
  const started = Date.now();
  const result = await s.send({ to: { phone: '+31612348001', name: 'New contact' }, message: 'slow' });
  expect(Date.now() - started).toBeLessThan(maxMs);
  expect(result.status).toBe(500);
  expect(result.body).toEqual({ status: 'error', message: 'Internal server error' });
  expect(await counts()).toEqual(before);
  // The connection is usable again at once.
  expect((await s.send({ to: { phone: '+31612348001' }, message: 'fast' })).status).toBe(202);
}

describe.skipIf(!onPostgres)('statement and transaction timeouts (PostgreSQL)', () => {
  let slowStatement: Awaited<ReturnType<typeof appWithSlowInsert>>;
  let slowTransaction: Awaited<ReturnType<typeof appWithSlowInsert>>;
  beforeAll(async () => {
    slowStatement = await appWithSlowInsert({ statementTimeoutMs: 300 }, 30);
    slowTransaction = await appWithSlowInsert({ statementTimeoutMs: 30_000, transactionTimeoutMs: 500 }, 2);
  });
  afterAll(async () => {
    await slowStatement?.drop();
    await slowTransaction?.drop();
  });

  it('a statement over DB_STATEMENT_TIMEOUT_MS is cancelled: the spec 500, everything rolled back', async () => {
    await expectRolledBack500(slowStatement.app, 5000);
    expect(slowStatement.app.logs.join('')).toMatch(/statement timeout/);
  });

  it('a transaction open past DB_TRANSACTION_TIMEOUT_MS is rolled back: the spec 500', async () => {
    await expectRolledBack500(slowTransaction.app, 5000);
  });

  it('migrations and other sessions are not cut by the statement timeout', async () => {
    const answer = await slowStatement.app.db.withSession((session) => session.query<{ ok: number }>('SELECT 1 AS ok FROM pg_sleep(0.5)'));
    expect(answer).toEqual([{ ok: 1 }]);
    const shown = await slowStatement.app.db.prisma.$queryRaw<{ statement_timeout: string }[]>`SHOW statement_timeout`;
    expect(shown).toEqual([{ statement_timeout: '300ms' }]);
  });
});
