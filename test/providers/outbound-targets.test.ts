import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../src/cli/run-admin.js';
import { loadEnv } from '../../src/env.js';
import { checkTarget, createOutboundClient, nonPublicClass, type Resolver } from '../../src/lib/outbound-http.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { workspaceWithChannel } from '../helpers/factories.js';
import { appPerFile } from '../helpers/fresh-database.js';
import { startReceiver } from '../helpers/receiver.js';
import { restClient } from '../helpers/rest.js';
import { testProviders, testWorker } from '../helpers/worker.js';
import { TEST_SECRETS_KEY, testSealer } from '../helpers/secrets.js';

/** docs/operating-safely.md, Outbound targets: outbound targets (event subscription and channel webhook URLs) under WEBHOOK_PRIVATE_TARGETS. */

// Workers claim every due delivery: a database of its own.
const perFile = appPerFile();
const { cleanups } = perFile;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(done: () => boolean | Promise<boolean>, ms = 8000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

/** DNS as the test says: each name answers the addresses listed for it, in turn when several answers are given. */
function fakeDns(names: Record<string, string[][]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    const answers = names[hostname];
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

async function admin(env: Record<string, string>, resolve: Resolver | undefined, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    argv,
    loadEnv({ NODE_ENV: 'test', SECRETS_KEY: TEST_SECRETS_KEY, ...env }),
    { stdout: (line) => out.push(line), stderr: (line) => err.push(line) },
    async () => ({ ...perFile.app.db, close: async () => {} }),
    resolve ? { resolve } : {},
  );
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Every notation of a non-public address the URL parser understands, with the class it is refused as. */
const PRIVATE_URLS: [string, string][] = [
  ['http://127.0.0.1/hook', 'loopback'],
  ['http://2130706433/hook', 'loopback'],
  ['http://0177.0.0.1/hook', 'loopback'],
  ['http://127.1/hook', 'loopback'],
  ['http://0x7f.0.0.1/hook', 'loopback'],
  ['http://[::ffff:127.0.0.1]/hook', 'loopback'],
  ['http://[::1]:8080/hook', 'loopback'],
  ['http://10.0.0.8/hook', 'private'],
  ['http://172.16.5.4/hook', 'private'],
  ['http://192.168.1.1/hook', 'private'],
  ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
  ['http://[fe80::1]/hook', 'linkLocal'],
  ['http://[fd00:ec2::254]/latest/meta-data/', 'uniqueLocal'],
  ['http://100.64.0.1/hook', 'carrierGradeNat'],
  ['http://100.100.100.200/latest/meta-data/', 'carrierGradeNat'],
  ['http://224.0.0.1/hook', 'multicast'],
  ['http://[ff02::1]/hook', 'multicast'],
  ['http://0.0.0.0/hook', 'unspecified'],
  ['http://[::]/hook', 'unspecified'],
  ['http://[64:ff9b::7f00:1]/hook', 'rfc6052'],
  // NAT64 local-use prefix (RFC 8215): ipaddr.js classes 64:ff9b:1::/48 with 64:ff9b::/96.
  ['http://[64:ff9b:1::a00:1]/hook', 'rfc6052'],
  // IPv4-compatible IPv6 (::/96, RFC 4291): the URL parser writes [::127.0.0.1] as [::7f00:1].
  ['http://[::127.0.0.1]/hook', 'ipv4Compatible'],
  ['http://[::a00:1]/hook', 'ipv4Compatible'],
  ['http://[::8.8.8.8]/hook', 'ipv4Compatible'],
];

describe('address classes', () => {
  it('only public unicast addresses pass; a mapped IPv4 address is judged as itself', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect(nonPublicClass(address), address).toBeNull();
    expect(nonPublicClass('::ffff:10.0.0.1')).toBe('private');
    // An address that embeds IPv4 in another way reaches an address other than the one written.
    for (const address of ['::7f00:1', '::127.0.0.1', '::808:808', '::8.8.8.8']) expect(nonPublicClass(address), address).toBe('ipv4Compatible');
    for (const address of ['64:ff9b:1::a00:1', '64:ff9b:1:ffff::1', '64:ff9b::808:808']) expect(nonPublicClass(address), address).toBe('rfc6052');
    expect(nonPublicClass('::1')).toBe('loopback');
    expect(nonPublicClass('::')).toBe('unspecified');
    expect(nonPublicClass('not an address')).toBe('invalid');
  });
});

describe('admin commands under WEBHOOK_PRIVATE_TARGETS=deny', () => {
  const deny = { WEBHOOK_PRIVATE_TARGETS: 'deny' };

  it('refuse every notation of a non-public address with one line, and create nothing', async () => {
    const ws = await workspaceWithChannel(perFile.app.db.prisma);
    for (const [url, range] of PRIVATE_URLS) {
      const hook = await admin(deny, undefined, 'webhook:create', '--hostname', ws.host, '--url', url);
      expect(hook.code, url).toBe(1);
      expect(hook.stderr, url).toMatch(new RegExp(`^error: --url refused: .* ${range} address; outbound targets must be public`));
      expect(hook.stderr.split('\n')).toHaveLength(1);
      const channel = await admin(deny, undefined, 'channel:create', '--hostname', ws.host, '--name', 'Hooked', '--webhook-url', url);
      expect(channel.code, url).toBe(1);
      expect(channel.stderr).toMatch(/^error: --webhook-url refused: /);
    }
    expect(await perFile.app.db.prisma.webhookEndpoint.count({ where: { workspaceId: ws.workspace.id } })).toBe(0);
    expect(await perFile.app.db.prisma.channel.count({ where: { workspaceId: ws.workspace.id } })).toBe(1);
  });

  it('resolve host names: a name with any non-public address is refused, a public one stored', async () => {
    const ws = await workspaceWithChannel(perFile.app.db.prisma);
    const dns = fakeDns({ 'internal.example': [['93.184.216.34', '10.1.2.3']], 'hooks.example': [['93.184.216.34', '2606:4700::1111']] });
    const refused = await admin(deny, dns, 'webhook:create', '--hostname', ws.host, '--url', 'https://internal.example/hook');
    expect(refused.stderr).toBe('error: --url refused: internal.example resolves to 10.1.2.3, which is a private address; outbound targets must be public (WEBHOOK_PRIVATE_TARGETS=allow permits private ones)');
    const missing = await admin(deny, dns, 'webhook:create', '--hostname', ws.host, '--url', 'https://nowhere.example/hook');
    expect(missing.stderr).toMatch(/^error: --url refused: nowhere\.example does not resolve \(ENOTFOUND\)$/);
    const stored = await admin(deny, dns, 'webhook:create', '--hostname', ws.host, '--url', 'https://hooks.example/hook');
    expect(stored.code, stored.stderr).toBe(0);
    expect(JSON.parse(stored.stdout).url).toBe('https://hooks.example/hook');
  });

  it('is the default in production; development and tests allow private targets', async () => {
    const ws = await workspaceWithChannel(perFile.app.db.prisma);
    const production = await admin({ NODE_ENV: 'production' }, undefined, 'webhook:create', '--hostname', ws.host, '--url', 'http://127.0.0.1:9/hook');
    expect(production.code).toBe(1);
    const allowed = await admin({ NODE_ENV: 'production', WEBHOOK_PRIVATE_TARGETS: 'allow' }, undefined, 'webhook:create', '--hostname', ws.host, '--url', 'http://127.0.0.1:9/hook');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await admin({}, undefined, 'webhook:create', '--hostname', ws.host, '--url', 'http://localhost:9/hook')).code).toBe(0);
  });
});

describe('URL credentials', () => {
  it('are refused at creation under either policy, and never shown by a listing', async () => {
    const ws = await workspaceWithChannel(perFile.app.db.prisma);
    for (const policy of ['allow', 'deny']) {
      const hook = await admin({ WEBHOOK_PRIVATE_TARGETS: policy }, undefined, 'webhook:create', '--hostname', ws.host, '--url', 'https://user:pass@hooks.example/in');
      expect(hook.code).toBe(2);
      expect(hook.stderr).toBe('error: --url must not contain a user name or password');
      const channel = await admin({ WEBHOOK_PRIVATE_TARGETS: policy }, undefined, 'channel:create', '--hostname', ws.host, '--name', 'X', '--webhook-url', 'https://user@hooks.example/in');
      expect(channel.stderr).toBe('error: --webhook-url must not contain a user name or password');
    }
    // Stored before the rule existed.
    await createWebhook(perFile.app.db.prisma, { workspaceId: ws.workspace.id, url: 'https://olduser:oldsecret@hooks.example/in', events: [] }, testSealer);
    await perFile.app.db.prisma.channel.update({ where: { id: ws.channel.id }, data: { webhookUrl: 'https://chanuser:chansecret@hooks.example/c' } });
    const hooks = await admin({}, undefined, 'webhook:list', '--hostname', ws.host);
    const channels = await admin({}, undefined, 'channel:list', '--hostname', ws.host);
    for (const listing of [hooks.stdout, channels.stdout]) {
      expect(listing).not.toMatch(/olduser|oldsecret|chanuser|chansecret/);
    }
    expect(JSON.parse(hooks.stdout).webhooks[0].url).toBe('https://***@hooks.example/in');
    expect(JSON.parse(channels.stdout).channels[0].webhookUrl).toBe('https://***@hooks.example/c');
  });
});

describe('deliveries under WEBHOOK_PRIVATE_TARGETS=deny', () => {
  /** A workspace whose events go to `url`, one event queued, and a worker with the given policy and DNS. */
  async function eventTo(url: string, targets: 'allow' | 'deny', resolve?: Resolver) {
    const ws = await workspaceWithChannel(perFile.app.db.prisma);
    const { endpoint } = await createWebhook(perFile.app.db.prisma, { workspaceId: ws.workspace.id, url, events: ['contact.created'] }, testSealer);
    const created = await restClient(perFile.app, ws.host, ws.apiKey).post('/contacts', { name: 'Target', email: `t${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const w = testWorker(perFile.app.db, { providers: testProviders({ targets, ...(resolve ? { resolve } : {}) }) });
    cleanups.push(() => w.stop());
    w.start();
    const delivery = () => perFile.app.db.prisma.delivery.findFirstOrThrow({ where: { endpointId: endpoint.id } });
    return { delivery };
  }

  it('refuse a name that resolved to a public address when stored and resolves to a private one now (DNS rebinding)', async () => {
    const r = await startReceiver();
    cleanups.push(r.close);
    const port = new URL(r.url).port;
    // Public when the admin command checked it; the receiver's loopback address when delivering.
    const dns = fakeDns({ 'rebind.example': [['93.184.216.34'], ['127.0.0.1']] });
    const stored = await admin({ WEBHOOK_PRIVATE_TARGETS: 'deny' }, dns, 'webhook:create', '--hostname', (await workspaceWithChannel(perFile.app.db.prisma)).host, '--url', `http://rebind.example:${port}/hook`);
    expect(stored.code, stored.stderr).toBe(0);
    const { delivery } = await eventTo(`http://rebind.example:${port}/hook`, 'deny', dns);
    await until(async () => (await delivery()).attempts >= 1 && (await delivery()).lockedBy === null);
    const refused = await delivery();
    expect(refused.status).toBe('pending');
    expect(refused.lastError).toBe(
      'webhook target refused: rebind.example resolves to 127.0.0.1, which is a loopback address; outbound targets must be public (WEBHOOK_PRIVATE_TARGETS=allow permits private ones)',
    );
    expect(r.received).toHaveLength(0);
  });

  it('refuse an address stored before the rule, and deliver the same under allow', async () => {
    const r = await startReceiver();
    cleanups.push(r.close);
    const denied = await eventTo(r.url, 'deny');
    await until(async () => (await denied.delivery()).lastError !== null);
    expect((await denied.delivery()).lastError).toMatch(/^webhook target refused: 127\.0\.0\.1 is a loopback address/);
    await cleanups.pop()!();
    expect(r.received).toHaveLength(0);

    const allowed = await eventTo(r.url, 'allow');
    await until(async () => (await allowed.delivery()).status === 'succeeded');
    expect(r.received.length).toBeGreaterThan(0);
  });

  it('never follow a redirect: a 3xx fails the attempt and its location gets nothing', async () => {
    const elsewhere = await startReceiver();
    cleanups.push(elsewhere.close);
    const redirecting = await startReceiver(() => ({ status: 307 }));
    cleanups.push(redirecting.close);
    // The receiver's answers carry no Location of their own; the client must not look for one either way.
    const { delivery } = await eventTo(redirecting.url, 'allow');
    await until(async () => (await delivery()).lastError !== null);
    expect((await delivery()).lastError).toBe('webhook answered HTTP 307 (redirects are not followed)');
    expect(elsewhere.received).toHaveLength(0);
  });

  it('a redirect to a private address is not followed either', async () => {
    const target = await startReceiver();
    cleanups.push(target.close);
    const http = await import('node:http');
    const server = http.createServer((_req, res) => res.writeHead(302, { location: target.url }).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const port = (server.address() as { port: number }).port;
    const client = createOutboundClient({ policy: 'allow', timeoutMs: 2000 });
    cleanups.push(() => client.close());
    const response = await client.fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(302);
    await response.body?.cancel();
    expect(target.received).toHaveLength(0);
  });
});

describe('checkTarget', () => {
  it('refuses every private notation under deny, and only the form under allow', async () => {
    for (const [url] of PRIVATE_URLS) {
      await expect(checkTarget(url, 'deny'), url).rejects.toThrow(/outbound targets must be public/);
      await expect(checkTarget(url, 'allow'), url).resolves.toBeUndefined();
    }
    await expect(checkTarget('ftp://example.com/', 'allow')).rejects.toThrow('the URL must be an http(s) URL');
  });
});


describe('the guarded client’s timeout', () => {
  /** A local server that answers its head after `headMs`, then `chunks` body chunks `everyMs` apart. */
  async function slowServer(options: { headMs: number; chunks: number; everyMs: number }) {
    const http = await import('node:http');
    const server = http.createServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.flushHeaders();
        let sent = 0;
        const next = () => {
          if (sent === options.chunks) return void res.end();
          res.write(Buffer.alloc(1024, sent++));
          setTimeout(next, options.everyMs);
        };
        next();
      }, options.headMs);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/file`;
  }

  it('bounds the wait for the head only: a body that streams for longer than the timeout completes', async () => {
    const url = await slowServer({ headMs: 0, chunks: 16, everyMs: 100 });
    const client = createOutboundClient({ policy: 'allow', timeoutMs: 500 });
    cleanups.push(() => client.close());
    const started = Date.now();
    const response = await client.fetch(url);
    const body = Buffer.from(await response.arrayBuffer());
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(body.length).toBe(16 * 1024);
  });

  it('a head later than the timeout is given up on; the caller’s own signal aborts too', async () => {
    const client = createOutboundClient({ policy: 'allow', timeoutMs: 300 });
    cleanups.push(() => client.close());
    const late = await slowServer({ headMs: 2000, chunks: 1, everyMs: 0 });
    const started = Date.now();
    await expect(client.fetch(late)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(1500);
    const caller = new AbortController();
    const pending = client.fetch(late, { signal: caller.signal });
    caller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});
