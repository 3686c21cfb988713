import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { onPostgres, openTestDatabase } from '../helpers/app.js';
import { uniqueHost } from '../helpers/factories.js';
import { testSealer } from '../helpers/secrets.js';
import { runAdminOn } from '../helpers/admin.js';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(() => db.close());

/** Runs an admin command in-process against the test database. */
const admin = (...argv: string[]) => runAdminOn(db, argv);

async function ok(...argv: string[]) {
  const result = await admin(...argv);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.json;
}

async function fails(code: 1 | 2, argv: string[], message: RegExp) {
  const result = await admin(...argv);
  expect(result.code).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr.split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^error: /);
  expect(result.stderr).toMatch(message);
}

async function workspace() {
  const hostname = uniqueHost();
  await ok('workspace:create', '--hostname', hostname, '--name', 'Acme');
  const channel = await ok('channel:create', '--hostname', hostname, '--name', 'Support');
  return { hostname, channel };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('workspace:create', () => {
  it('creates a workspace with a lowercased hostname', async () => {
    const hostname = uniqueHost('Mixed').toUpperCase();
    const created = await ok('workspace:create', '--hostname', hostname, '--name', ' Acme Corp ');
    expect(created).toEqual({ id: expect.stringMatching(UUID), hostname: hostname.toLowerCase(), name: 'Acme Corp' });
  });

  it('rejects a duplicate hostname, a malformed hostname, a missing flag and an unknown flag', async () => {
    const hostname = uniqueHost();
    await ok('workspace:create', '--hostname', hostname, '--name', 'A');
    await fails(1, ['workspace:create', '--hostname', hostname, '--name', 'B'], /already exists/);
    await fails(2, ['workspace:create', '--hostname', 'https://x.test/path', '--name', 'B'], /--hostname must be a hostname/);
    await fails(2, ['workspace:create', '--hostname', uniqueHost()], /--name is required/);
    await fails(2, ['workspace:create', '--hostname', uniqueHost(), '--name', 'B', '--colour', 'red'], /Unknown option '--colour'/);
  });
});

describe('commands and usage', () => {
  it('rejects an unknown command, or none, with exit code 2', async () => {
    await fails(2, ['workspace:explode'], /unknown command "workspace:explode"/);
    await fails(2, [], /no command given/);
  });

  it('lists every command on help', async () => {
    const result = await admin('help');
    expect(result.code).toBe(0);
    for (const name of ['workspace:create', 'channel:key', 'template:create', 'webhook:delete', 'workspace:list', 'channel:list', 'template:list', 'user:list']) {
      expect(result.stdout).toContain(name);
    }
  });

  it('says on help how the database is chosen', async () => {
    const { stdout } = await admin('help');
    expect(stdout).toMatch(/DATABASE_URL/);
    expect(stdout).toMatch(/PGLITE_DIR \(default \.\/\.data\/pglite\)/);
    expect(stdout).toMatch(/A running server holds the embedded database: stop it first/);
  });

  it('names on help the settings the commands share with the servers', async () => {
    const { stdout } = await admin('help');
    for (const name of ['SECRETS_KEY', 'PUBLIC_URL', 'REDIS_URL', 'REDIS_PREFIX']) expect(stdout).toContain(name);
  });
});

describe('user:create', () => {
  it('creates a workspace user and rejects an unknown hostname or a duplicate email', async () => {
    const { hostname } = await workspace();
    const user = await ok('user:create', '--hostname', hostname, '--name', 'Ann', '--email', 'Ann@Example.com');
    expect(user).toEqual({ id: expect.stringMatching(UUID), name: 'Ann', email: 'Ann@Example.com' });
    await fails(1, ['user:create', '--hostname', hostname, '--name', 'Ann 2', '--email', 'ann@example.com'], /already exists/);
    await fails(1, ['user:create', '--hostname', uniqueHost('nowhere'), '--name', 'X', '--email', 'x@example.com'], /No workspace has hostname/);
    await fails(2, ['user:create', '--hostname', hostname, '--name', 'X', '--email', 'not-an-email'], /--email must be a valid email/);
  });
});

describe('channel:create and credentials', () => {
  it('creates a channel with an API key that is stored only as its hash', async () => {
    const hostname = uniqueHost();
    await ok('workspace:create', '--hostname', hostname, '--name', 'Acme');
    const channel = await ok('channel:create', '--hostname', hostname, '--name', 'SMS line', '--type', 'sms');
    expect(channel).toEqual({
      id: expect.stringMatching(UUID),
      name: 'SMS line',
      type: 'sms',
      apiKey: expect.stringMatching(/^cak_[0-9A-Za-z]{46}$/),
      provider: 'webhook',
      inboundUrl: null,
    });

    const rows = await db.prisma.$queryRaw<{ row: string; token_hash: string }[]>`
      SELECT row_to_json(t)::text AS row, t.token_hash FROM access_tokens t WHERE t.channel_id = ${channel.id}::uuid`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(sha256(channel.apiKey));
    expect(rows[0]!.row).not.toContain(channel.apiKey);
    expect(rows[0]!.row).not.toContain(channel.apiKey.slice(12));
  });

  it('defaults the type to whatsapp, keeps a webhook URL and rejects bad values', async () => {
    const { hostname, channel } = await workspace();
    expect(channel.type).toBe('whatsapp');
    expect(channel).not.toHaveProperty('webhookSecret');
    const hooked = await ok('channel:create', '--hostname', hostname, '--name', 'Hooked', '--webhook-url', 'https://hooks.example.com/in');
    expect(hooked).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Hooked',
      type: 'whatsapp',
      apiKey: expect.stringMatching(/^cak_/),
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
      provider: 'webhook',
      inboundUrl: null,
    });
    const stored = await db.prisma.channel.findUniqueOrThrow({ where: { id: hooked.id } });
    expect(stored.webhookUrl).toBe('https://hooks.example.com/in');
    // Stored sealed, never in clear.
    expect(stored.webhookSecret).toMatch(/^sealed:v1:/);
    expect(stored.webhookSecret).not.toContain(hooked.webhookSecret.slice(6));
    expect(testSealer.open(stored.webhookSecret!)).toBe(hooked.webhookSecret);
    await fails(2, ['channel:create', '--hostname', hostname, '--name', 'X', '--type', 'pigeon'], /--type must be one of whatsapp, sms, email, webchat/);
    await fails(2, ['channel:create', '--hostname', hostname, '--name', 'X', '--webhook-url', 'ftp://x'], /--webhook-url must be an http\(s\) URL/);
    await fails(1, ['channel:create', '--hostname', uniqueHost(), '--name', 'X'], /No workspace has hostname/);
  });

  it('issues additional keys, with an expiry when asked', async () => {
    const { channel } = await workspace();
    const before = Date.now();
    const key = await ok('channel:key', '--channel', channel.id, '--expires-in-seconds', '3600');
    expect(key.apiKey).toMatch(/^cak_/);
    expect(key.apiKey).not.toBe(channel.apiKey);
    const expiresAt = new Date(key.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
    expect((await ok('channel:key', '--channel', channel.id)).expiresAt).toBeNull();
    await fails(2, ['channel:key', '--channel', channel.id, '--expires-in-seconds', 'soon'], /--expires-in-seconds must be a whole number/);
    await fails(1, ['channel:key', '--channel', '00000000-0000-4000-8000-000000000000'], /No channel has id/);
    await fails(1, ['channel:key', '--channel', 'nope'], /No channel has id nope/);
  });

  it('rotates and shows a webhook channel’s signing secret once', async () => {
    const { hostname, channel } = await workspace();
    await fails(1, ['channel:webhook-secret', '--channel', channel.id], /has no webhook URL/);
    const hooked = await ok('channel:create', '--hostname', hostname, '--name', 'Hooked', '--webhook-url', 'https://hooks.example.com/in');
    const before = (await db.prisma.channel.findUniqueOrThrow({ where: { id: hooked.id } })).webhookSecret;
    const rotated = await ok('channel:webhook-secret', '--channel', hooked.id);
    expect(rotated).toEqual({ id: hooked.id, webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/) });
    expect(rotated.webhookSecret).not.toBe(testSealer.open(before!));
    expect(testSealer.open((await db.prisma.channel.findUniqueOrThrow({ where: { id: hooked.id } })).webhookSecret!)).toBe(rotated.webhookSecret);
  });

  it('deactivates a channel', async () => {
    const { channel } = await workspace();
    expect(await ok('channel:deactivate', '--channel', channel.id)).toEqual({ id: channel.id, status: 'inactive' });
  });

  it('creates a connection over channels of its workspace only, with a hashed token', async () => {
    const { hostname, channel } = await workspace();
    const second = await ok('channel:create', '--hostname', hostname, '--name', 'Second');
    const connection = await ok('connection:create', '--hostname', hostname, '--name', 'CRM', '--channels', `${channel.id}, ${second.id}`, '--expires-in-seconds', '60');
    expect(connection).toEqual({ id: expect.stringMatching(UUID), token: expect.stringMatching(/^cct_/), expiresAt: expect.any(String) });
    const links = await db.prisma.connectionChannel.findMany({ where: { connectionId: connection.id } });
    expect(links.map((l) => l.channelId).sort()).toEqual([channel.id, second.id].sort());
    const token = await db.prisma.accessToken.findFirstOrThrow({ where: { connectionId: connection.id } });
    expect(token.tokenHash).toBe(sha256(connection.token));
    expect(JSON.stringify(token)).not.toContain(connection.token);

    const foreign = await workspace();
    await fails(1, ['connection:create', '--hostname', hostname, '--name', 'X', '--channels', foreign.channel.id], /No channel of this workspace/);
    await fails(2, ['connection:create', '--hostname', hostname, '--name', 'X', '--channels', ' , '], /--channels must name at least one channel id/);
  });

  it('revokes a token once', async () => {
    const { channel } = await workspace();
    expect(await ok('token:revoke', '--token', channel.apiKey)).toEqual({ revoked: true });
    await fails(1, ['token:revoke', '--token', channel.apiKey], /already revoked/);
    await fails(1, ['token:revoke', '--token', 'cak_unknown'], /No such token/);
  });
});

describe('channel providers', () => {
  const whatsapp = ['--phone-number-id', '109876543210', '--access-token', 'EAAG-admin-token', '--app-secret', 'admin-app-secret', '--verify-token', 'admin-verify'];

  it('creates a whatsapp_cloud channel: credentials sealed, the inbound URL under PUBLIC_URL printed', async () => {
    const { hostname } = await workspace();
    const created = await ok('channel:create', '--hostname', hostname, '--name', 'WA', '--provider', 'whatsapp_cloud', ...whatsapp);
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'WA',
      type: 'whatsapp',
      apiKey: expect.stringMatching(/^cak_/),
      provider: 'whatsapp_cloud',
      inboundUrl: `http://localhost:4000/webhooks/whatsapp/${created.id}`,
    });
    const [row] = await db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM channels c WHERE id = ${created.id}::uuid`;
    for (const secret of ['EAAG-admin-token', 'admin-app-secret', 'admin-verify']) expect(row!.row).not.toContain(secret);
    const stored = await db.prisma.channel.findUniqueOrThrow({ where: { id: created.id } });
    expect(JSON.parse(testSealer.open(stored.providerSecrets!))).toEqual({ accessToken: 'EAAG-admin-token', appSecret: 'admin-app-secret', verifyToken: 'admin-verify' });
    const listed = (await ok('channel:list', '--hostname', hostname)).channels.find((c: { id: string }) => c.id === created.id);
    expect(listed).toEqual({
      id: created.id,
      name: 'WA',
      type: 'whatsapp',
      status: 'active',
      webhookUrl: null,
      provider: 'whatsapp_cloud',
      settings: { phoneNumberId: '109876543210', typingIndicators: 'off' },
      inboundUrl: `http://localhost:4000/webhooks/whatsapp/${created.id}`,
    });
    expect(JSON.stringify(listed)).not.toMatch(/EAAG|admin-app-secret|admin-verify/);
  });

  it('refuses a missing, foreign or bad flag, and a provider that does not carry the type, with one line and nothing created', async () => {
    const { hostname } = await workspace();
    const count = () => db.prisma.channel.count({ where: { workspace: { hostname } } });
    const before = await count();
    const without = (flag: string) => {
      const i = whatsapp.indexOf(flag);
      return [...whatsapp.slice(0, i), ...whatsapp.slice(i + 2)];
    };
    await fails(1, ['channel:create', '--hostname', hostname, '--name', 'X', '--provider', 'whatsapp_cloud', ...without('--app-secret')], /^error: --app-secret is required for provider whatsapp_cloud$/);
    await fails(1, ['channel:create', '--hostname', hostname, '--name', 'X', '--type', 'sms', '--provider', 'whatsapp_cloud', ...whatsapp], /--provider whatsapp_cloud carries whatsapp channels, not sms ones/);
    await fails(1, ['channel:create', '--hostname', hostname, '--name', 'X', '--access-token', 'T'], /^error: --access-token is not a setting of provider webhook$/);
    await fails(1, ['channel:create', '--hostname', hostname, '--name', 'X', '--provider', 'whatsapp_cloud', ...whatsapp.slice(2), '--phone-number-id', '+31 6'], /--phone-number-id must be the numeric phone number id/);
    await fails(1, ['channel:create', '--hostname', hostname, '--name', 'X', '--provider', 'whatsapp_cloud', ...whatsapp, '--webhook-url', 'https://hooks.example.com/in'], /--webhook-url is a setting of provider webhook/);
    await fails(2, ['channel:create', '--hostname', hostname, '--name', 'X', '--provider', 'carrier-pigeon'], /--provider must be one of webhook, whatsapp_cloud/);
    expect(await count()).toBe(before);
  });

  it('channel:configure rotates what is given and keeps the rest; switching provider needs every flag', async () => {
    const { hostname, channel } = await workspace();
    await fails(1, ['channel:configure', '--channel', channel.id, '--provider', 'whatsapp_cloud', '--access-token', 'T'], /^error: --phone-number-id is required for provider whatsapp_cloud$/);
    expect(await ok('channel:configure', '--channel', channel.id, '--provider', 'whatsapp_cloud', ...whatsapp)).toEqual({ id: channel.id, provider: 'whatsapp_cloud' });
    expect(await ok('channel:configure', '--channel', channel.id, '--access-token', 'EAAG-rotated')).toEqual({ id: channel.id, provider: 'whatsapp_cloud' });
    const stored = await db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(JSON.parse(testSealer.open(stored.providerSecrets!))).toEqual({ accessToken: 'EAAG-rotated', appSecret: 'admin-app-secret', verifyToken: 'admin-verify' });
    // A setting with a default (typing indicators, off) is never required, and kept once set.
    expect(stored.providerSettings).toEqual({ phoneNumberId: '109876543210', typingIndicators: 'off' });
    expect(await ok('channel:configure', '--channel', channel.id, '--typing-indicators', 'on')).toEqual({ id: channel.id, provider: 'whatsapp_cloud' });
    expect(await ok('channel:configure', '--channel', channel.id, '--access-token', 'EAAG-again')).toEqual({ id: channel.id, provider: 'whatsapp_cloud' });
    expect((await db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).providerSettings).toEqual({ phoneNumberId: '109876543210', typingIndicators: 'on' });
    await fails(1, ['channel:configure', '--channel', channel.id], /^error: nothing to change/);
    await fails(1, ['channel:configure', '--channel', channel.id, '--verify-token', 'has space'], /--verify-token must be the verify token as given, without spaces/);
    expect(await ok('channel:configure', '--channel', channel.id, '--provider', 'webhook')).toEqual({ id: channel.id, provider: 'webhook' });
    const back = await db.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect([back.providerSettings, back.providerSecrets]).toEqual([{}, null]);
    expect(hostname).toBeTruthy();
  });

  it('inbound:reprocess queues a channel’s stored inbound events again', async () => {
    const { hostname } = await workspace();
    const created = await ok('channel:create', '--hostname', hostname, '--name', 'WA', '--provider', 'whatsapp_cloud', ...whatsapp);
    const stored = await db.prisma.channel.findUniqueOrThrow({ where: { id: created.id } });
    for (const receivedAt of [new Date('2026-01-01T00:00:00Z'), new Date('2026-06-01T00:00:00Z')]) {
      await db.prisma.inboundEvent.create({ data: { workspaceId: stored.workspaceId, channelId: stored.id, provider: 'whatsapp_cloud', body: Buffer.from('{}'), receivedAt } });
    }
    expect(await ok('inbound:reprocess', '--channel', created.id, '--since', '2026-03-01T00:00:00Z')).toEqual({ queued: 1 });
    expect(await ok('inbound:reprocess', '--channel', created.id)).toEqual({ queued: 2 });
    expect(await db.prisma.delivery.count({ where: { inboundEvent: { channelId: created.id } } })).toBe(3);
    await fails(2, ['inbound:reprocess', '--channel', created.id, '--since', 'yesterday'], /--since must be a date and time/);
    // Queued work of this test is no other test's: the worker of another file must not find it.
    await db.prisma.delivery.deleteMany({ where: { inboundEvent: { channelId: created.id } } });
  });
});

describe('list commands', () => {
  it('lists workspaces, and a workspace’s channels and users, without secrets', async () => {
    const { hostname, channel } = await workspace();
    const created = (await ok('workspace:list')).workspaces.find((w: { hostname: string }) => w.hostname === hostname);
    expect(created).toEqual({ id: expect.stringMatching(UUID), hostname, name: 'Acme' });

    const hooked = await ok('channel:create', '--hostname', hostname, '--name', 'Hooked', '--type', 'sms', '--webhook-url', 'https://hooks.example.com/in');
    await ok('channel:deactivate', '--channel', channel.id);
    const channels = await ok('channel:list', '--hostname', hostname);
    expect(channels).toEqual({
      channels: [
        { id: channel.id, name: 'Support', type: 'whatsapp', status: 'inactive', webhookUrl: null, provider: 'webhook', settings: {}, inboundUrl: null },
        { id: hooked.id, name: 'Hooked', type: 'sms', status: 'active', webhookUrl: 'https://hooks.example.com/in', provider: 'webhook', settings: {}, inboundUrl: null },
      ],
    });
    expect(JSON.stringify(channels)).not.toContain(hooked.webhookSecret);
    expect(JSON.stringify(channels)).not.toMatch(/whsec_|cak_/);

    expect(await ok('user:list', '--hostname', hostname)).toEqual({ users: [] });
    const ann = await ok('user:create', '--hostname', hostname, '--name', 'Ann', '--email', 'ann@example.com');
    const bob = await ok('user:create', '--hostname', hostname, '--name', 'Bob', '--email', 'Bob@Example.com');
    expect(await ok('user:list', '--hostname', hostname)).toEqual({
      users: [
        { id: ann.id, name: 'Ann', email: 'ann@example.com' },
        { id: bob.id, name: 'Bob', email: 'Bob@Example.com' },
      ],
    });
  });

  it('lists a channel’s templates', async () => {
    const { channel } = await workspace();
    const other = await workspace();
    expect(await ok('template:list', '--channel', channel.id)).toEqual({ templates: [] });
    const welcome = await ok('template:create', '--channel', channel.id, '--name', 'welcome', '--language', 'en', '--body', 'Hi {{1}}');
    const promo = await ok('template:create', '--channel', channel.id, '--name', 'promo', '--language', 'pt_BR', '--body', 'Oi', '--status', 'pending');
    await ok('template:create', '--channel', other.channel.id, '--name', 'elsewhere', '--language', 'en', '--body', 'x');
    expect(await ok('template:list', '--channel', channel.id)).toEqual({
      templates: [
        { id: welcome.id, name: 'welcome', language: 'en', status: 'approved' },
        { id: promo.id, name: 'promo', language: 'pt_BR', status: 'pending' },
      ],
    });
  });

  it('rejects an unknown workspace or channel, and a missing flag', async () => {
    await fails(1, ['channel:list', '--hostname', uniqueHost('nowhere')], /No workspace has hostname/);
    await fails(1, ['user:list', '--hostname', uniqueHost('nowhere')], /No workspace has hostname/);
    await fails(1, ['template:list', '--channel', '00000000-0000-4000-8000-000000000000'], /No channel has id/);
    await fails(2, ['channel:list'], /--hostname is required/);
    await fails(2, ['workspace:list', '--hostname', 'x.test'], /Unknown option '--hostname'/);
  });
});

describe('template:create', () => {
  it('creates a template and counts its placeholders', async () => {
    const { channel } = await workspace();
    const template = await ok('template:create', '--channel', channel.id, '--name', 'order_ready', '--language', 'en', '--body', 'Hi {{1}}, order {{2}} is ready. {{1}}!');
    expect(template).toEqual({ id: expect.stringMatching(UUID), name: 'order_ready', language: 'en', status: 'approved' });
    const stored = await db.prisma.channelTemplate.findUniqueOrThrow({ where: { id: template.id } });
    expect(stored.parameterCount).toBe(2);
    const pending = await ok('template:create', '--channel', channel.id, '--name', 'promo', '--language', 'pt_BR', '--body', 'Oi', '--status', 'pending');
    expect(pending.status).toBe('pending');
  });

  it('rejects gaps in placeholders, duplicates and bad values', async () => {
    const { channel } = await workspace();
    await fails(1, ['template:create', '--channel', channel.id, '--name', 't', '--language', 'en', '--body', 'Hi {{1}} {{3}}'], /without gaps/);
    await ok('template:create', '--channel', channel.id, '--name', 't', '--language', 'en', '--body', 'Hi');
    await fails(1, ['template:create', '--channel', channel.id, '--name', 't', '--language', 'en', '--body', 'Hi again'], /already has a template t in en/);
    await fails(2, ['template:create', '--channel', channel.id, '--name', 't', '--language', 'english!', '--body', 'x'], /--language must be a language code/);
    await fails(2, ['template:create', '--channel', channel.id, '--name', 't', '--language', 'en', '--body', 'x', '--status', 'live'], /--status must be one of/);
  });
});

describe('contact:create and contact:delete', () => {
  it('imports a legacy contact with neither email nor phone, and a group', async () => {
    const { hostname } = await workspace();
    const legacy = await ok('contact:create', '--hostname', hostname, '--name', 'Old Timer');
    const group = await ok('contact:create', '--hostname', hostname, '--name', 'Team A', '--group');
    const rows = await db.prisma.contact.findMany({ where: { id: { in: [legacy.id, group.id] } }, orderBy: { name: 'asc' } });
    expect(rows.map((r) => [r.name, r.email, r.phone, r.isGroup])).toEqual([
      ['Old Timer', null, null, false],
      ['Team A', null, null, true],
    ]);
  });

  it('stores a raw phone as given alongside its E.164 form and blocks the same number in another form', async () => {
    const { hostname } = await workspace();
    const contact = await ok('contact:create', '--hostname', hostname, '--name', 'Jan', '--phone-raw', '0031 6 1234 5678');
    const phones = await db.prisma.contactPhone.findMany({ where: { contactId: contact.id } });
    expect(phones.map((p) => [p.number, p.raw])).toEqual([['+31612345678', '0031 6 1234 5678']]);
    const stored = await db.prisma.contact.findUniqueOrThrow({ where: { id: contact.id } });
    expect(stored.phone).toBe('+31612345678');
    await fails(1, ['contact:create', '--hostname', hostname, '--name', 'Twin', '--phone-raw', '+31 6 12345678'], new RegExp(`Contact ${contact.id} already has`));
  });

  it('keeps a phone with no derivable E.164 form as its digits', async () => {
    const { hostname } = await workspace();
    const contact = await ok('contact:create', '--hostname', hostname, '--name', 'Local', '--phone-raw', '06-1234 5678');
    const phones = await db.prisma.contactPhone.findMany({ where: { contactId: contact.id } });
    expect(phones.map((p) => [p.number, p.raw])).toEqual([['0612345678', '06-1234 5678']]);
  });

  it('rejects a duplicate email regardless of case, until the holder is deleted', async () => {
    const { hostname } = await workspace();
    const first = await ok('contact:create', '--hostname', hostname, '--name', 'Ann', '--email', 'ann@example.com');
    await fails(1, ['contact:create', '--hostname', hostname, '--name', 'Ann B', '--email', 'ANN@example.com'], new RegExp(first.id));
    expect(await ok('contact:delete', '--id', first.id)).toEqual({ id: first.id, deleted: true });
    await ok('contact:create', '--hostname', hostname, '--name', 'Ann B', '--email', 'ANN@example.com');
    await fails(1, ['contact:delete', '--id', first.id], /No contact has id/);
  });

  it('rejects a short name and a bad email', async () => {
    const { hostname } = await workspace();
    await fails(2, ['contact:create', '--hostname', hostname, '--name', ' A '], /--name The name must be at least 2 characters/);
    await fails(2, ['contact:create', '--hostname', hostname, '--name', 'Ann', '--email', 'nope'], /valid email/);
  });
});

describe('webhooks', () => {
  it('creates, lists and deletes webhook endpoints', async () => {
    const { hostname } = await workspace();
    const all = await ok('webhook:create', '--hostname', hostname, '--url', 'https://hooks.example.com/a');
    expect(all.events).toEqual([
      'message.created',
      'message.status_changed',
      'conversation.closed',
      'conversation.reopened',
      'conversation.assigned',
      'conversation.read',
      'conversation.labels_changed',
      'contact.created',
      'contact.updated',
      'broadcast.started',
      'broadcast.finished',
    ]);
    expect(all.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(all.secret.slice(6), 'base64')).toHaveLength(24);
    const some = await ok('webhook:create', '--hostname', hostname, '--url', 'https://hooks.example.com/b', '--events', 'message.created,contact.updated');
    expect(some.events).toEqual(['message.created', 'contact.updated']);

    const listed = await ok('webhook:list', '--hostname', hostname);
    expect(listed).toEqual({
      webhooks: [
        { id: all.id, url: 'https://hooks.example.com/a', events: all.events },
        { id: some.id, url: 'https://hooks.example.com/b', events: ['message.created', 'contact.updated'] },
      ],
    });
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    expect(await ok('webhook:delete', '--id', all.id)).toEqual({ id: all.id, deleted: true });
    expect((await ok('webhook:list', '--hostname', hostname)).webhooks.map((w: { id: string }) => w.id)).toEqual([some.id]);
    await fails(1, ['webhook:delete', '--id', all.id], /No webhook has id/);
    await fails(2, ['webhook:create', '--hostname', hostname, '--url', 'https://x.test', '--events', 'message.exploded'], /--events must be one of/);
  });
});

// The process test exercises the embedded default; the in-process tests above cover both databases.
describe.skipIf(onPostgres)('npm run admin', () => {
  it('runs as a process: JSON on stdout and exit 0, one error line and a non-zero exit on bad input', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
    const env = { ...process.env, PGLITE_DIR: path.join(dir, 'db'), DATABASE_URL: '' };
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], { env }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    try {
      const created = await run('workspace:create', '--hostname', 'cli.test', '--name', 'CLI');
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toEqual({ id: expect.stringMatching(UUID), hostname: 'cli.test', name: 'CLI' });
      const duplicate = await run('workspace:create', '--hostname', 'cli.test', '--name', 'CLI');
      expect(duplicate.code).toBe(1);
      expect(duplicate.stdout).toBe('');
      expect(duplicate.stderr.trim()).toBe('error: A workspace with hostname cli.test already exists.');
      const misconfigured = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', 'webhook:list', '--hostname', 'cli.test'], {
        env: { ...env, PORT: 'x', LOG_LEVEL: 'loud' },
      }).catch((e: { code: number; stderr: string }) => e);
      expect((misconfigured as { code: number }).code).toBe(1);
      expect((misconfigured as { stderr: string }).stderr.trim().split('\n')).toHaveLength(1);
      expect((misconfigured as { stderr: string }).stderr).toMatch(/^error: invalid configuration: PORT: .*; LOG_LEVEL: /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    // Three processes, each opening (and the first migrating) an embedded database: far longer than one request.
  }, 120_000);
});
