import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

describe('Host', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    const yoga = createApp({ db: app.db, env: app.env, logger: (await import('../../src/logger.js')).createLogger({ ...app.env, LOG_LEVEL: 'silent' }) });
    server = http.createServer(yoga);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** Sends raw request bytes to the real port; answers the status line and body. */
  function raw(request: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('error', reject);
      socket.on('close', () => resolve({ status: Number(data.split(' ')[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) }));
    });
  }

  it('no Host (HTTP/1.0) and an empty Host reach no workspace, even one named after the server address: 401', async () => {
    const { channel } = await import('../../src/modules/channels/channels.service.js').then(async ({ createChannel }) => {
      const { createWorkspace } = await import('../../src/modules/workspaces/workspaces.service.js');
      const existing = await app.db.prisma.workspace.findUnique({ where: { hostname: '127.0.0.1' } });
      const workspace = existing ?? (await createWorkspace(app.db.prisma, { hostname: '127.0.0.1', name: 'Server address' }));
      return { channel: await createChannel(app.db.prisma, { workspaceId: workspace.id, name: 'Own', type: 'sms' }) };
    });
    const auth = `Authorization: Bearer ${channel.apiKey}\r\n`;
    const withHost = await raw(`GET /api/connect/channels HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}Connection: close\r\n\r\n`);
    expect(withHost.status).toBe(200);
    const noHost = await raw(`GET /api/connect/channels HTTP/1.0\r\n${auth}\r\n`);
    expect(noHost.status).toBe(401);
    expect(noHost.body).toContain('Unauthenticated.');
    expect((await raw(`GET /api/connect/channels HTTP/1.1\r\nHost: \r\n${auth}Connection: close\r\n\r\n`)).status).toBe(401);
    const query = '{"query":"{ channels { id } }"}';
    const graphql = await raw(`POST /graphql HTTP/1.0\r\n${auth}Content-Type: application/json\r\nContent-Length: ${query.length}\r\n\r\n${query}`);
    expect(graphql.status).toBe(401);
    expect(graphql.body).toContain('UNAUTHENTICATED');
  });
});
