import { spawn } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres } from './helpers/app.js';

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

/** Starts `npm start`'s entry point and collects its output until it listens (or exits). */
function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, DATABASE_URL: '', PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
  return { child, listening, exited, output: () => output };
}

// The embedded default is what a newcomer runs; PostgreSQL startup is covered by the suite's setup.
describe.skipIf(onPostgres)('npm start on the embedded database', () => {
  it('seeds the demo workspace once, prints a working curl line and stops cleanly on SIGTERM', async () => {
    const pgliteDir = path.join(dir, 'pglite');
    const first = startServer({ PGLITE_DIR: pgliteDir });
    const base = await first.listening;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const curl = /curl -H 'Authorization: Bearer (cak_[\w-]+)' -H 'Accept: application\/json' http:\/\/localhost:\d+(\/api\/connect\/channels)/.exec(first.output());
    expect(curl, first.output()).not.toBeNull();

    const response = await get(`${base}${curl![2]}`, { authorization: `Bearer ${curl![1]}`, host: `localhost:${new URL(base).port}` });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.body) as { data: { name: string; status: string }[] };
    expect(body.data).toEqual([expect.objectContaining({ name: 'Demo channel', status: 'active' })]);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('stopped');
    // The key appears only in the banner, never in a log line.
    const logLines = first.output().split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(2);
    for (const line of logLines) expect(line).not.toContain(curl![1]);

    const second = startServer({ PGLITE_DIR: pgliteDir });
    await second.listening;
    expect(second.output()).toContain('database schema is up to date');
    expect(second.output()).not.toContain('Demo workspace created');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses to start with a clear message on invalid configuration', async () => {
    const server = startServer({ PORT: 'eighty' });
    await expect(server.listening).rejects.toThrow(/PORT: expected a port number/);
    expect(await server.exited).toBe(1);
  });
});
