import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { onPostgres } from '../../helpers/app.js';

/** One request to the demo, addressed to its workspace (`localhost`) on the address it listens on. */
function call(port: number, method: string, path: string, key: string, body?: unknown) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers: { host: 'localhost', authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The subscription the banner suggests, over SSE: the `next` events as they arrive. */
function subscribe(port: number, key: string) {
  const events: any[] = [];
  const query = JSON.stringify({ query: 'subscription { messageAdded { direction status body sender { type name } } }' });
  const req = http.request(
    {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/graphql',
      headers: { host: 'localhost', authorization: `Bearer ${key}`, accept: 'text/event-stream', 'content-type': 'application/json' },
    },
    (res) => {
      let buffer = '';
      res.on('data', (chunk) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (/^event: next$/m.test(block) && data) events.push(JSON.parse(data).data.messageAdded);
        }
      });
    },
  );
  req.on('error', () => {});
  req.end(query);
  return { events, close: () => req.destroy() };
}

// The demo runs on its own in-memory database: once is enough.
describe.skipIf(onPostgres)('npm run demo:whatsapp', () => {
  it('sends the banner’s template through the local WhatsApp, and the reply arrives in messageAdded', async () => {
    // What `npm run demo:whatsapp` runs, without npm between the test and the process it stops.
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo-whatsapp.ts'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    try {
      for (const deadline = Date.now() + 30_000; !output.includes('Ctrl-C stops the demo') && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      const key = /Bearer (cak_\w+)/.exec(output)?.[1];
      const port = Number(/http:\/\/localhost:(\d+)\/graphql/.exec(output)?.[1]);
      expect(key, output).toBeDefined();
      const body = JSON.parse(/-d '(\{.*\})'/.exec(output)![1]!);
      const stream = subscribe(port, key!);
      await new Promise((r) => setTimeout(r, 500));
      const sent = await call(port, 'POST', '/api/connect/messages', key!, body);
      expect(sent.status, sent.text).toBe(202);
      for (const deadline = Date.now() + 20_000; stream.events.length < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      stream.close();
      expect(stream.events).toEqual([
        { direction: 'outbound', status: 'queued', body: 'Hello Demo Person, thanks for trying the Connect gateway!', sender: { type: 'channel', name: 'Demo WhatsApp' } },
        { direction: 'inbound', status: 'received', body: 'Thanks! This reply came back through a signed WhatsApp webhook.', sender: { type: 'contact', name: 'Demo Person' } },
      ]);
      const listed = JSON.parse((await call(port, 'GET', '/api/connect/messages', key!)).text).data as { direction: string; status: string }[];
      expect(listed.map((m) => [m.direction, m.status])).toEqual([
        ['inbound', 'received'],
        ['outbound', 'read'],
      ]);
      expect(output).toMatch(/status sent[\s\S]*status delivered[\s\S]*status read/);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    }
  }, 60_000);

  it('stops on SIGINT sent to the npm process, as both demos do', async () => {
    // npm forwards the signal to its script; the scripts exec node, so no shell stands between.
    const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    for (const name of ['demo:whatsapp', 'demo:inbox']) expect(scripts[name], name).toMatch(/^exec node /);
    const npm = spawn('npm', ['run', 'demo:whatsapp'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout.on('data', (chunk) => (output += chunk));
    npm.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    try {
      for (const deadline = Date.now() + 180_000; !output.includes('Ctrl-C stops the demo') && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain('Ctrl-C stops the demo');
      npm.kill('SIGINT');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
      expect(code, output).toBe(0);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
    }
  }, 240_000);
});
