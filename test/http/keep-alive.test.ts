import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { workspaceWithChannel } from '../helpers/factories.js';
import { serveOnPort, type ServedApp } from '../helpers/real-port.js';

/**
 * Idle keep-alive connections on the production node:http server (HTTP_KEEP_ALIVE_MS): kept well
 * past node's 5 s, so a client pool reusing one after a pause is not reset as the server closes it.
 */

let app: TestApp;
let ws: Awaited<ReturnType<typeof workspaceWithChannel>>;
const served: ServedApp[] = [];

beforeAll(async () => {
  app = await createTestApp();
  ws = await workspaceWithChannel(app.db.prisma);
});
afterAll(async () => {
  for (const one of served) await one.close();
  await app.close();
});

/** GET /api/connect/channels on `agent`'s connection: the status and the local port the request left from. */
function get(port: number, agent: http.Agent): Promise<{ status: number; localPort: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/api/connect/channels', agent, headers: { host: ws.host, authorization: `Bearer ${ws.apiKey}` } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, localPort: request.socket!.localPort! }));
    });
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two requests on one client pool of one connection, `idleMs` apart, to a server with `env`: each answer's status and local port. */
async function twoRequestsApart(env: TestApp['env'], idleMs: number) {
  const one = await serveOnPort(app.db, env);
  served.push(one);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await get(one.port, agent);
    await sleep(idleMs);
    const second = await get(one.port, agent);
    return { first, second };
  } finally {
    agent.destroy();
  }
}

describe('keep-alive', () => {
  it('keeps an idle connection open past node’s 5 s by default: the next request reuses it', { timeout: 20_000 }, async () => {
    const { first, second } = await twoRequestsApart(app.env, 5_500);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.localPort).toBe(first.localPort);
  });

  it('closes an idle connection after HTTP_KEEP_ALIVE_MS: the next request opens another', { timeout: 20_000 }, async () => {
    const { first, second } = await twoRequestsApart({ ...app.env, HTTP_KEEP_ALIVE_MS: 1000 }, 2_000);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.localPort).not.toBe(first.localPort);
  });
});
