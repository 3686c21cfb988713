import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { runAdmin } from '../../../src/cli/run-admin.js';
import type { Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../../src/db/temporary.js';
import { loadEnv } from '../../../src/env.js';
import { Sealer, SealError, newKey, sealedKeyId } from '../../../src/lib/sealed.js';
import { keyFilePath, loadSealer } from '../../../src/lib/secrets-key.js';
import { SECRETS_KEY_REQUIRED, SecretsKeyError, prepareSecrets } from '../../../src/modules/secrets/secrets.service.js';
import { createWebhook } from '../../../src/modules/webhooks/webhooks.service.js';
import { createWorkspace } from '../../../src/modules/workspaces/workspaces.service.js';
import { onPostgres } from '../../helpers/app.js';
import { uniqueHost } from '../../helpers/factories.js';
import { freshDatabase } from '../../helpers/fresh-database.js';
import { startServer, waitFor } from '../../helpers/server-process.js';

/** docs/channels.md: every stored secret sealed with SECRETS_KEY (AES-256-GCM), checked at start, rotatable. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function migrated(): Promise<Database> {
  const fresh = await freshDatabase();
  cleanups.push(() => fresh.drop());
  await fresh.db.withSession((session) => migrate(session));
  return fresh.db;
}

async function workspaceOf(db: Database) {
  return createWorkspace(db.prisma, { hostname: uniqueHost('sealed'), name: 'Sealed' });
}

const base64 = (key: Buffer) => key.toString('base64');

describe('the sealer', () => {
  it('opens what it sealed, with its key or the previous one, and never a value tampered with', () => {
    const [a, b] = [newKey(), newKey()];
    const old = new Sealer(a);
    const sealed = old.seal('whsec_secret');
    expect(sealed).toMatch(/^sealed:v1:[0-9a-f]{8}:/);
    expect(sealed).not.toContain('whsec_secret');
    expect(old.seal('whsec_secret')).not.toBe(sealed);
    expect(old.open(sealed)).toBe('whsec_secret');
    const rotating = new Sealer(b, a);
    expect(rotating.open(sealed)).toBe('whsec_secret');
    expect(sealedKeyId(rotating.reseal(sealed))).toBe(rotating.currentKeyId);
    expect(() => new Sealer(b).open(sealed)).toThrow(SealError);
    const tampered = `${sealed.slice(0, -4)}${sealed.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    expect(() => old.open(tampered)).toThrow(/damaged/);
  });
});

describe('the key', () => {
  it('on the embedded database without SECRETS_KEY: generated once into secrets.key (0600) beside the database', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sealed-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const pgliteDir = path.join(dir, 'pglite');
    const first = loadSealer({ key: undefined, previous: undefined, kind: 'pglite', pgliteDir });
    const file = keyFilePath(pgliteDir);
    expect(file).toBe(path.join(dir, 'secrets.key'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const again = loadSealer({ key: undefined, previous: undefined, kind: 'pglite', pgliteDir });
    expect(again!.currentKeyId).toBe(first!.currentKeyId);
    expect(again!.open(first!.seal('x'))).toBe('x');
    // An explicit key wins; PostgreSQL without one has none; an in-memory database keeps one in memory.
    const explicit = newKey();
    expect(loadSealer({ key: explicit, previous: undefined, kind: 'pglite', pgliteDir })!.currentKeyId).toBe(new Sealer(explicit).currentKeyId);
    expect(loadSealer({ key: undefined, previous: undefined, kind: 'postgres', pgliteDir })).toBeNull();
    expect(loadSealer({ key: undefined, previous: undefined, kind: 'pglite', pgliteDir: 'memory://' })).not.toBeNull();
  });

  it('two processes creating secrets.key at the same moment agree on one key, every time', async () => {
    const { Worker } = await import('node:worker_threads');
    const { pathToFileURL } = await import('node:url');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sealed-race-'));
    cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const rounds = 300;
    // Two threads (each with its own file system calls, as two processes have) meet at a barrier
    // before each round, then both load the sealer of that round's fresh directory at once.
    const barrier = new Int32Array(new SharedArrayBuffer(4 * rounds));
    const code = `
      const { workerData, parentPort } = require('node:worker_threads');
      import('tsx/esm/api').then(async ({ tsImport }) => {
        const { loadSealer } = await tsImport(workerData.module, workerData.parent);
        const ids = [];
        for (let round = 0; round < workerData.rounds; round++) {
          Atomics.add(workerData.barrier, round, 1);
          while (Atomics.load(workerData.barrier, round) < 2) {}
          try {
            ids.push(loadSealer({ key: undefined, previous: undefined, kind: 'pglite', pgliteDir: workerData.dir + '/' + round + '/pglite' }).currentKeyId);
          } catch (error) {
            ids.push('error: ' + error.message);
          }
        }
        parentPort.postMessage(ids);
      });`;
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        const worker = new Worker(code, {
          eval: true,
          workerData: { module: path.resolve('src/lib/secrets-key.ts'), parent: pathToFileURL(path.resolve('test/modules/secrets/secrets-at-rest.test.ts')).href, rounds, barrier, dir },
        });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    const [first, second] = await Promise.all([run(), run()]);
    expect(first.filter((id) => id.startsWith('error')), 'first').toEqual([]);
    expect(second.filter((id) => id.startsWith('error')), 'second').toEqual([]);
    expect(second).toEqual(first);
    expect(new Set(first).size).toBe(rounds);
    // Nothing is left beside the keys: each directory holds its key and the database's directory name only.
    for (let round = 0; round < rounds; round++) expect(fs.readdirSync(path.join(dir, String(round)))).toEqual(['secrets.key']);
  }, 120_000);

  it('SECRETS_KEY must be base64 of 32 bytes', () => {
    expect(() => loadEnv({ SECRETS_KEY: 'short' })).toThrow(/SECRETS_KEY: expected base64 of 32 random bytes/);
    expect(() => loadEnv({ SECRETS_KEY: base64(Buffer.alloc(16)) })).toThrow(/SECRETS_KEY/);
    expect(loadEnv({ SECRETS_KEY: base64(newKey()) }).SECRETS_KEY).toHaveLength(32);
  });
});

describe('at every start', () => {
  it('secrets stored in clear before sealing are sealed; a key that cannot open them is refused; none without a key', async () => {
    const db = await migrated();
    const workspace = await workspaceOf(db);
    await db.prisma.$executeRaw`INSERT INTO webhook_endpoints (id, workspace_id, url, secret, updated_at) VALUES (gen_random_uuid(), ${workspace.id}::uuid, 'https://hooks.example/in', 'whsec_plain', now())`;
    await db.prisma.$executeRaw`INSERT INTO channels (id, workspace_id, name, webhook_url, webhook_secret, updated_at) VALUES (gen_random_uuid(), ${workspace.id}::uuid, 'Old', 'https://hooks.example/c', 'whsec_channel', now())`;
    await expect(prepareSecrets(db.prisma, null)).rejects.toThrow(SecretsKeyError);
    await expect(prepareSecrets(db.prisma, null)).rejects.toThrow(/^SECRETS_KEY is not set, but the database holds 2 stored secret\(s\)/);

    const key = newKey();
    expect(await prepareSecrets(db.prisma, new Sealer(key))).toEqual({ sealed: 2 });
    const endpoint = await db.prisma.webhookEndpoint.findFirstOrThrow({ where: { workspaceId: workspace.id } });
    const channel = await db.prisma.channel.findFirstOrThrow({ where: { workspaceId: workspace.id } });
    expect(new Sealer(key).open(endpoint.secret)).toBe('whsec_plain');
    expect(new Sealer(key).open(channel.webhookSecret!)).toBe('whsec_channel');
    expect(await prepareSecrets(db.prisma, new Sealer(key))).toEqual({ sealed: 0 });

    const wrong = new Sealer(newKey());
    await expect(prepareSecrets(db.prisma, wrong)).rejects.toThrow(/^SECRETS_KEY does not open the stored secrets: they were sealed with key [0-9a-f]{8}/);
  });

  it('secrets:rotate re-seals everything with SECRETS_KEY, reading the old ones with SECRETS_KEY_PREVIOUS', async () => {
    const db = await migrated();
    const workspace = await workspaceOf(db);
    const [oldKey, newer] = [newKey(), newKey()];
    const { secret } = await createWebhook(db.prisma, { workspaceId: workspace.id, url: 'https://hooks.example/in', events: [] }, new Sealer(oldKey));
    const out: string[] = [];
    const err: string[] = [];
    const run = (env: Record<string, string>, ...argv: string[]) =>
      runAdmin(argv, loadEnv({ NODE_ENV: 'test', ...env }), { stdout: (line) => out.push(line), stderr: (line) => err.push(line) }, async () => ({ ...db, close: async () => {} }));
    // The new key alone cannot open what the old one sealed: refused before anything runs.
    expect(await run({ SECRETS_KEY: base64(newer) }, 'secrets:rotate')).toBe(1);
    expect(err.pop()).toMatch(/^error: SECRETS_KEY does not open the stored secrets/);
    expect(await run({ SECRETS_KEY: base64(newer), SECRETS_KEY_PREVIOUS: base64(oldKey) }, 'secrets:rotate')).toBe(0);
    expect(JSON.parse(out.pop()!)).toEqual({ resealed: 1, kept: 0 });
    const stored = await db.prisma.webhookEndpoint.findFirstOrThrow({ where: { workspaceId: workspace.id } });
    expect(new Sealer(newer).open(stored.secret)).toBe(secret);
    expect(await prepareSecrets(db.prisma, new Sealer(newer))).toEqual({ sealed: 0 });
  });
});

describe.skipIf(!onPostgres)('on PostgreSQL without SECRETS_KEY', () => {
  it('a command that stores a secret fails with one line; the server refuses to start while secrets are stored', async () => {
    const database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_unsealed');
    cleanups.push(() => database.drop());
    const { openDatabase } = await import('../../../src/db/database.js');
    const db = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
    cleanups.push(() => db.close());
    await db.withSession((session) => migrate(session));
    const workspace = await workspaceOf(db);
    const err: string[] = [];
    const run = (env: Record<string, string>, ...argv: string[]) =>
      runAdmin(argv, loadEnv({ NODE_ENV: 'test', DATABASE_URL: database.url, ...env }), { stdout: () => {}, stderr: (line) => err.push(line) }, async () => ({ ...db, close: async () => {} }));
    expect(await run({}, 'webhook:create', '--hostname', workspace.hostname, '--url', 'https://hooks.example/in')).toBe(1);
    expect(err).toEqual([`error: ${SECRETS_KEY_REQUIRED}`]);
    expect(await db.prisma.webhookEndpoint.count()).toBe(0);
    // A channel without secrets needs no key.
    expect(await run({}, 'channel:create', '--hostname', workspace.hostname, '--name', 'Plain')).toBe(0);

    const key = base64(newKey());
    expect(await run({ SECRETS_KEY: key }, 'webhook:create', '--hostname', workspace.hostname, '--url', 'https://hooks.example/in')).toBe(0);
    const unkeyed = startServer({ DATABASE_URL: database.url, SECRETS_KEY: '' });
    expect(await unkeyed.exited).toBe(1);
    expect(unkeyed.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^error: SECRETS_KEY is not set, but the database holds 1 stored secret/)]);
    const wrong = startServer({ DATABASE_URL: database.url, SECRETS_KEY: base64(newKey()) });
    expect(await wrong.exited).toBe(1);
    expect(wrong.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^error: SECRETS_KEY does not open the stored secrets/)]);
    const right = startServer({ DATABASE_URL: database.url, SECRETS_KEY: key });
    cleanups.push(async () => {
      right.child.kill('SIGTERM');
      await right.exited;
    });
    await right.listening;
    await waitFor(right, /listening on/);
    expect(right.output()).not.toContain(key);
  }, 120_000);
});
