import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createChannel, rotateWebhookSecret } from '../../src/modules/channels/channels.service.js';
import { createConnection, issueChannelKey, revokeToken } from '../../src/modules/credentials/credentials.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { onPostgres } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { requestServer, startServer, type ServerProcess } from '../helpers/server-process.js';
import { testSealer } from '../helpers/secrets.js';

describe.skipIf(!onPostgres)('no secret in any log line of a full run at trace level', () => {
  // A database of its own: the server's delivery worker claims every due delivery.
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let server: ServerProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_secrets');
    db = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
    await db.withSession((session) => migrate(session));
    // The first delivery attempts fail, so retries are logged too.
    receiver = await startReceiver((n) => ({ status: n <= 2 ? 500 : 200 }));
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await receiver.close();
    await db.close();
    await database.drop();
  });

  it('tokens, keys, webhook secrets and encrypted payloads never reach the output', async () => {
    const prisma = db.prisma;
    const host = `secrets-${randomBytes(4).toString('hex')}.test`;
    const workspace = await createWorkspace(prisma, { hostname: host, name: 'Secrets' });
    const { channel, apiKey } = await createChannel(prisma, { workspaceId: workspace.id, name: 'Hooked', type: 'whatsapp', webhookUrl: receiver.url }, testSealer);
    const { secret: channelSecret } = await rotateWebhookSecret(prisma, channel.id, testSealer);
    const second = await createChannel(prisma, { workspaceId: workspace.id, name: 'Second', type: 'sms' });
    const connection = await createConnection(prisma, { workspaceId: workspace.id, name: 'CRM', channelIds: [channel.id, second.channel.id] });
    const revoked = await issueChannelKey(prisma, channel);
    await revokeToken(prisma, revoked.token);
    const { secret: endpointSecret } = await createWebhook(prisma, { workspaceId: workspace.id, url: receiver.url, events: ['message.created'] }, testSealer);
    const mistyped = `${apiKey.slice(0, 20)}${apiKey[20] === 'a' ? 'b' : 'a'}${apiKey.slice(21)}`;
    const ciphertexts = Array.from({ length: 3 }, () => `CIPHERTEXT-${randomBytes(24).toString('base64')}`);

    server = startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'trace', DELIVERY_WORKER: '1', DELIVERY_POLL_MS: '50', DELIVERY_BACKOFF_MS: '50', SEED_DEMO: '0' });
    const base = await server.listening;
    const auth = (token: string) => ({ authorization: `Bearer ${token}` });

    const answers = [
      await requestServer(base, host, 'GET', '/api/connect/channels', auth(apiKey)),
      await requestServer(base, host, 'POST', '/api/connect/contacts', auth(apiKey), { name: 'Ann', email: 'ann@example.com' }),
      await requestServer(base, host, 'POST', '/api/connect/messages', auth(apiKey), { to: { phone: '+31612340101' }, message: 'Plain hello' }),
      await requestServer(base, host, 'POST', '/api/connect/messages', { ...auth(apiKey), 'idempotency-key': 'k1' }, { to: { phone: '+31612340101' }, message: ciphertexts[0], is_encrypted: true }),
      await requestServer(base, host, 'POST', '/api/connect/messages', { ...auth(apiKey), 'idempotency-key': 'k1' }, { to: { phone: '+31612340101' }, message: ciphertexts[0], is_encrypted: true }),
      await requestServer(base, host, 'POST', '/api/connect/messages', { ...auth(connection.token), 'x-channel-uuid': channel.id }, { to: { email: 'bo@example.com' }, message: ciphertexts[1], is_encrypted: true }),
      await requestServer(base, host, 'POST', '/graphql', auth(apiKey), {
        query: 'mutation($input: SendMessageInput!) { sendMessage(input: $input) { message { id body placeholder } userErrors { message } } }',
        variables: { input: { to: { phone: '+31612340102' }, message: ciphertexts[2], isEncrypted: true } },
      }),
      await requestServer(base, host, 'GET', '/api/connect/messages?search=CIPHERTEXT', auth(apiKey)),
      // Refusals: a bad body, a mistyped key, a revoked key, a missing channel header, an unknown host.
      await requestServer(base, host, 'POST', '/api/connect/messages', auth(apiKey), { to: { phone: 'nope' }, message: ciphertexts[0], is_encrypted: true }),
      await requestServer(base, host, 'GET', '/api/connect/channels', auth(mistyped)),
      await requestServer(base, host, 'GET', '/api/connect/channels', auth(revoked.token)),
      await requestServer(base, host, 'GET', '/api/connect/contacts', auth(connection.token)),
      await requestServer(base, 'unknown.test', 'GET', '/api/connect/channels', auth(apiKey)),
      await requestServer(base, host, 'POST', '/graphql', auth(revoked.token), { query: '{ viewer { workspace { id } } }' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 201, 202, 202, 202, 202, 200, 200, 422, 401, 401, 400, 401, 401]);
    for (const answer of answers) for (const ciphertext of ciphertexts) expect(answer.text).not.toContain(ciphertext);

    // Every delivery (the channel's and the event endpoint's) attempted, retried and settled.
    const deadline = Date.now() + 20_000;
    while ((await prisma.message.count({ where: { workspaceId: workspace.id, status: 'queued' } })) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await prisma.message.count({ where: { workspaceId: workspace.id, status: 'queued' } })).toBe(0);
    expect(receiver.received.length).toBeGreaterThanOrEqual(4);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    const output = server.output();
    const lines = output.split('\n').filter(Boolean);
    // The run really logged at trace level: one access line per request at least, and debug-or-lower lines.
    expect(lines.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(answers.length);
    expect(lines.some((line) => /"level":(10|20)\b/.test(line))).toBe(true);

    const secrets: Record<string, string> = {
      'channel API key': apiKey,
      'mistyped key': mistyped,
      'revoked key': revoked.token,
      'connection token': connection.token,
      'channel webhook secret': channelSecret,
      'event webhook secret': endpointSecret,
      'event webhook secret key': endpointSecret.replace(/^whsec_/, ''),
      ...Object.fromEntries(ciphertexts.map((c, i) => [`ciphertext ${i}`, c])),
    };
    for (const [what, secret] of Object.entries(secrets)) {
      expect(output.includes(secret), `${what} appears in the output`).toBe(false);
    }
    // Nor any token-shaped value, nor an Authorization header.
    expect(output).not.toMatch(/\b(cak|cct)_[0-9A-Za-z_-]{20,}/);
    expect(output).not.toMatch(/whsec_/);
    expect(output.toLowerCase()).not.toContain('bearer ');
  });
});
