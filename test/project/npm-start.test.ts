import { execFile } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { onPostgres } from '../helpers/app.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { accepts, freePort, startServer, waitFor } from '../helpers/server-process.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A GET with an explicit Host header, as curl sends it for http://localhost:PORT. */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** Lines of stderr other than npm's own notices about its configuration. */
function errorLines(server: ReturnType<typeof startServer>): string[] {
  return server.stderr().split('\n').filter((line) => line && !line.startsWith('npm warn'));
}

/** Runs an admin command as a process, as an operator would. */
function admin(env: Record<string, string>, ...args: string[]) {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], { env: { ...process.env, DATABASE_URL: '', ...env } });
}

// The embedded default is what a newcomer runs; PostgreSQL startup is covered by the suite's setup.
describe.skipIf(onPostgres)('npm start on the embedded database', () => {
  it('seeds the demo workspace once, prints a working curl line and stops cleanly on SIGTERM', async () => {
    const pgliteDir = path.join(dir, 'pglite');
    const first = startServer({ PGLITE_DIR: pgliteDir });
    const base = await first.listening;
    await waitFor(first, /GraphiQL: /);
    const port = new URL(base).port;
    const curl = /curl -H 'Authorization: Bearer (cak_[\w-]+)' -H 'Accept: application\/json' http:\/\/localhost:(\d+)(\/api\/connect\/channels)/.exec(first.output());
    expect(curl, first.output()).not.toBeNull();
    expect(curl![2]).toBe(port);
    const apiKey = curl![1]!;
    const channelId = /channel ([0-9a-f-]{36})/.exec(first.output())![1]!;
    // What a newcomer needs besides the key: the user for `from`, GraphiQL, and why the Host matters.
    expect(first.output()).toContain('workspace user agent@demo.localhost (usable in "from")');
    expect(first.output()).toContain(`GraphiQL: http://localhost:${port}/graphql`);
    expect(first.output()).toContain(`The Host header chooses the workspace: call http://localhost:${port}, not http://127.0.0.1:${port}, which reaches no workspace (401).`);

    const response = await get(`${base}${curl![3]}`, { authorization: `Bearer ${apiKey}`, host: `localhost:${port}` });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.body) as { data: { id: string; name: string; status: string }[] };
    expect(body.data).toEqual([expect.objectContaining({ id: channelId, name: 'Demo channel', status: 'active' })]);
    // The listening address is not the demo's hostname, as the banner says.
    expect((await get(`${base}${curl![3]}`, { authorization: `Bearer ${apiKey}`, host: `127.0.0.1:${port}` })).status).toBe(401);

    // One line per phase of the start, in order: none of them is silent for long.
    const phases = [
      'starting: loading the server',
      `starting: opening the embedded database in ${pgliteDir}`,
      'starting: applying ',
      'migration 1 of ',
      'database schema is up to date (',
      'Connect gateway listening on ',
      'starting: seeding the demo workspace',
    ].map((phase) => first.output().indexOf(phase));
    expect(phases.every((at) => at >= 0), first.output()).toBe(true);
    expect([...phases].sort((a, b) => a - b)).toEqual(phases);
    const total = /starting: applying (\d+) pending migrations/.exec(first.output())?.[1];
    expect(first.output()).toContain(`migration ${total} of ${total} applied: `);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('stopped');
    // The key appears once, in the banner, never in a log line.
    expect(first.output().split(apiKey)).toHaveLength(2);
    const logLines = first.output().split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(2);
    for (const line of logLines) expect(line).not.toContain(apiKey);

    const second = startServer({ PGLITE_DIR: pgliteDir });
    await second.listening;
    await waitFor(second, /For a new key/);
    expect(second.output()).toContain('database schema is up to date');
    expect(second.output()).not.toContain('Demo workspace "localhost" created');
    expect(second.output()).toContain(
      `For a new key, stop the server (it holds the embedded database), then run: npm run admin -- channel:key --channel ${channelId}`,
    );
    expect(second.output()).not.toContain(apiKey);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // The advice works once the server is stopped.
    const key = JSON.parse((await admin({ PGLITE_DIR: pgliteDir }, 'channel:key', '--channel', channelId)).stdout) as { apiKey: string };
    expect(key.apiKey).toMatch(/^cak_/);
  }, 120_000);

  it('binds before seeding: a busy port is one line and exit 1, and the next start still shows a key', async () => {
    const pgliteDir = path.join(dir, 'busy');
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const failed = startServer({ PGLITE_DIR: pgliteDir, PORT: String(port) });
      expect(await failed.exited).toBe(1);
      expect(errorLines(failed)).toEqual([
        `error: port ${port} on 127.0.0.1 is already in use: stop the process using it, or set PORT to another port`,
      ]);
      expect(failed.output()).not.toMatch(/cak_|Demo workspace/);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    const next = startServer({ PGLITE_DIR: pgliteDir });
    await next.listening;
    await waitFor(next, /Its API key is shown only now/);
    expect(next.output()).toMatch(/Bearer cak_/);
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
  }, 120_000);

  it('creates no demo workspace with SEED_DEMO=0', async () => {
    const server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '0' });
    await server.listening;
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('stopped');
    expect(server.output()).not.toMatch(/Demo workspace|cak_/);
  }, 120_000);

  it('runs as one node process under npm start: SIGTERM to npm stops the server with exit 0', async () => {
    const server = startServer({ PGLITE_DIR: 'memory://', SEED_DEMO: '0' }, 'npm');
    const port = Number(new URL(await server.listening).port);
    const pid = Number(/"pid":(\d+)/.exec(server.output())![1]);
    expect(pid).not.toBe(server.child.pid);
    const started = Date.now();
    process.kill(server.child.pid!, 'SIGTERM');
    expect(await server.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.output()).toContain('stopped');
    // The server itself is gone, not orphaned behind its wrapper.
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(await accepts(port)).toBe(false);
  }, 120_000);

  it('refuses to start with one clear line on invalid configuration', async () => {
    const server = startServer({ PORT: 'eighty', DB_POOL_SIZE: '0' });
    await expect(server.listening).rejects.toThrow(/exited with 1/);
    expect(errorLines(server)).toEqual([
      'error: invalid configuration: PORT: expected a port number from 0 to 65535; DB_POOL_SIZE: expected a whole number from 1 to 200',
    ]);
    expect(server.output()).toBe(server.stderr());
  });
});

describe.runIf(onPostgres)('start-up on PostgreSQL', () => {
  it('waits for a database that is not up yet, then serves', async () => {
    const direct = new URL(inject('databaseUrl'));
    const proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    proxy.port = await freePort();
    const viaProxy = new URL(direct);
    viaProxy.port = String(proxy.port);
    const server = startServer({ DATABASE_URL: viaProxy.toString(), DB_CONNECT_TIMEOUT_S: '30' });
    try {
      await waitFor(server, /waiting for PostgreSQL at .*ECONNREFUSED.*next attempt in/);
      await proxy.start();
      const base = await server.listening;
      expect(server.output()).toContain('"msg":"database available"');
      expect((await get(`${base}/readyz`, { host: 'localhost' })).status).toBe(200);
      // SEED_DEMO is off on PostgreSQL unless asked for.
      expect(server.output()).not.toMatch(/Demo workspace|cak_/);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
      await proxy.stop();
    }
  }, 120_000);

  it('gives up after DB_CONNECT_TIMEOUT_S with one line and exit 1', async () => {
    const url = new URL(inject('databaseUrl'));
    url.port = String(await freePort());
    const server = startServer({ DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_S: '1' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(/waiting for PostgreSQL/);
    const lines = errorLines(server);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: PostgreSQL at postgres:\/\/.* is not reachable after 1 s \(DB_CONNECT_TIMEOUT_S\): .*ECONNREFUSED/);
  }, 30_000);
});
