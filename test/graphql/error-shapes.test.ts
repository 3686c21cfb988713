import { describe, expect, it } from 'vitest';
import { bearer } from '../helpers/factories.js';
import { messagingSetup } from '../helpers/messaging.js';
import { serveOnPort } from '../helpers/real-port.js';
import { sessionSetup } from '../helpers/sessions.js';
import { socketClient } from '../helpers/websocket.js';
import { graphql } from '../gql/index.js';
import { servedAppPerFile } from '../helpers/served-app.js';

// A GraphQL 401 is answered in the media type the request accepted, with extensions.code; no
// GraphQL error carries transport details (extensions.http), over any transport.

const Viewer = graphql(`
  query ErrorShapesViewer {
    viewer {
      workspace {
        name
      }
    }
  }
`);

const Added = graphql(`
  subscription ErrorShapesAdded {
    messageAdded {
      id
    }
  }
`);

const port = servedAppPerFile();

/** Every GraphQL error in a JSON text, wherever it sits. */
function errorsIn(value: unknown): { message: string; extensions?: Record<string, unknown> }[] {
  if (Array.isArray(value)) return value.flatMap(errorsIn);
  if (!value || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  return [...(Array.isArray(record['errors']) ? (record['errors'] as never[]) : []), ...Object.values(record).flatMap(errorsIn)];
}

describe('a GraphQL 401', () => {
  const cases: { accept: string | undefined; type: string }[] = [
    { accept: 'application/graphql-response+json', type: 'application/graphql-response+json' },
    { accept: 'application/graphql-response+json, application/json;q=0.9', type: 'application/graphql-response+json' },
    { accept: 'application/json, application/graphql-response+json;q=0.5', type: 'application/json' },
    { accept: 'application/json', type: 'application/json' },
    { accept: '*/*', type: 'application/json' },
    { accept: undefined, type: 'application/json' },
  ];

  it('answers in the media type the request accepted, with extensions.code and nothing of the transport', async () => {
    const s = await messagingSetup(port.app);
    for (const { accept, type } of cases) {
      for (const method of ['GET', 'POST'] as const) {
        const headers: Record<string, string> = { authorization: 'Bearer cak_unknown', ...(accept ? { accept } : {}) };
        const response =
          method === 'GET'
            ? await port.app.fetch(s.host, `/graphql?${new URLSearchParams({ query: '{ viewer { workspace { name } } }' })}`, { headers })
            : await port.app.fetch(s.host, '/graphql', { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ viewer { workspace { name } } }' }) });
        expect(response.status, `${method} ${accept}`).toBe(401);
        expect(response.headers.get('content-type'), `${method} ${accept}`).toBe(`${type}; charset=utf-8`);
        expect(response.headers.get('www-authenticate')).toBe('Bearer');
        expect(await response.json()).toEqual({ errors: [{ message: 'Unauthenticated.', extensions: { code: 'UNAUTHENTICATED' } }] });
      }
    }
  });

  it('says TOKEN_EXPIRED for an expired session, in the accepted media type', async () => {
    const ss = await sessionSetup(port.app);
    await port.app.db.prisma.accessToken.update({ where: { id: ss.session.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const response = await port.app.fetch(ss.host, '/graphql', {
      method: 'POST',
      headers: { ...bearer(ss.session.token), accept: 'application/graphql-response+json', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { workspace { name } } }' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(await response.json()).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'TOKEN_EXPIRED' } }] });
  });
});

describe('errors over a WebSocket', () => {
  it("end a revoked session's subscription with UNAUTHENTICATED and no extensions.http", async () => {
    const ss = await sessionSetup(port.app);
    const socket = socketClient(port.served.port, ss.host, { Authorization: `Bearer ${ss.session.token}` });
    try {
      const subscription = socket.subscribe(Added, {});
      await socket.run(Viewer);
      await new Promise((r) => setTimeout(r, 100));
      expect((await ss.api.delete(`/sessions/${ss.session.id}`)).status).toBe(204);
      expect((await socket.closed).code).toBe(4403);
      const errors = errorsIn(subscription.received);
      expect(errors.map((error) => error.extensions)).toEqual([{ code: 'UNAUTHENTICATED' }]);
    } finally {
      await socket.dispose();
    }
  });

  it('refuse an operation over the budget with RATE_LIMITED and no extensions.http', async () => {
    const limited = await serveOnPort(port.app.db, { ...port.app.env, RATE_LIMIT_PER_MINUTE: 2 }, { providers: port.app.providers });
    const s = await messagingSetup(port.app);
    const socket = socketClient(limited.port, s.host, { Authorization: `Bearer ${s.apiKey}` });
    try {
      expect((await socket.run(Viewer)).data?.viewer?.workspace.name).toBe('Test workspace');
      const refused = await socket.run(Viewer).catch((errors: unknown) => ({ errors }));
      expect(errorsIn(refused).map((error) => error.extensions)).toEqual([{ code: 'RATE_LIMITED' }]);
    } finally {
      await socket.dispose();
      await limited.close();
    }
  });
});
