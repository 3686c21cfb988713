import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { loadEnv } from '../../../src/env.js';
import { openTestDatabase } from '../../helpers/app.js';
import { workspaceWithChannel } from '../../helpers/factories.js';
import { serveOnPort, type ServedApp } from '../../helpers/real-port.js';
import { TEST_SECRETS_KEY } from '../../helpers/secrets.js';
import { storedDocuments } from './helpers.js';

// The persisted-query links of urql and Apollo Client against a live server on a real port: a
// hash the workspace has not registered is PersistedQueryNotFound, on which each link resends the
// operation with its text, and the answer comes back; the server registers nothing on the way.
// Once the workspace has registered the text the link sends, the hash alone is answered.

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

interface Sent {
  method: string;
  /** The hash sent, from the body or the URL. */
  hash: string | null;
  /** The text sent, if any. */
  query: string | null;
}

/**
 * A fetch that records what each request sent. The workspace is named by X-Forwarded-Host (the
 * server trusts its proxy here), since fetch sends the URL's host, 127.0.0.1, as Host.
 */
function recordingFetch(sent: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, any>) : null;
    const extensions = body?.extensions ?? JSON.parse(url.searchParams.get('extensions') ?? 'null');
    sent.push({
      method: init?.method ?? 'GET',
      hash: extensions?.persistedQuery?.sha256Hash ?? null,
      query: body?.query ?? url.searchParams.get('query') ?? null,
    });
    return fetch(input, init);
  };
}

let db: Database;
let served: ServedApp;
let w: Awaited<ReturnType<typeof workspaceWithChannel>>;
let endpoint: string;
let headers: Record<string, string>;

beforeAll(async () => {
  db = await openTestDatabase();
  served = await serveOnPort(db, loadEnv({ NODE_ENV: 'test', TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: '1000000', SECRETS_KEY: TEST_SECRETS_KEY }));
  w = await workspaceWithChannel(db.prisma);
  endpoint = `http://127.0.0.1:${served.port}/graphql`;
  headers = { authorization: `Bearer ${w.apiKey}`, 'x-forwarded-host': w.host };
});
afterAll(async () => {
  await served.close();
  await db.close();
});

/** Registers documents through the server's endpoint, as a deploy step does. */
async function registerOverHttp(manifest: Record<string, string>) {
  const response = await fetch(`http://127.0.0.1:${served.port}/api/connect/graphql/documents`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(manifest),
  });
  return { status: response.status, body: await response.json() };
}

const plainViewer = () => ({ viewer: { workspace: { id: w.workspace.id, name: 'Test workspace' } } });
/** Apollo Client's cache adds `__typename` to every selection it sends. */
const typedViewer = () => ({ viewer: { __typename: 'Viewer', workspace: { __typename: 'Workspace', id: w.workspace.id, name: 'Test workspace' } } });

describe("urql's persistedExchange", () => {
  const client = (sent: Sent[]) =>
    new Client({
      url: endpoint,
      exchanges: [persistedExchange(), fetchExchange],
      fetch: recordingFetch(sent),
      fetchOptions: { headers },
      requestPolicy: 'network-only',
    });
  const document = parse('query UrqlViewer { viewer { workspace { id name } } }');

  it('falls back to the text on PersistedQueryNotFound, and the server registers nothing', async () => {
    const sent: Sent[] = [];
    const result = await client(sent).query(document, {}).toPromise();
    expect(result.error).toBeUndefined();
    expect(result.data).toEqual(plainViewer());
    // The hash alone (on GET, within the URL limit), then the hash with the text.
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ method: 'GET', query: null, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(sent[1]).toMatchObject({ hash: sent[0]!.hash, query: expect.stringContaining('UrqlViewer') });
    expect(sha256(sent[1]!.query!)).toBe(sent[0]!.hash);
    expect(await storedDocuments(db, w.workspace.id)).toEqual({});

    // Registered the way a deploy registers the client's documents, the hash alone is answered.
    expect(await registerOverHttp({ [sent[0]!.hash!]: sent[1]!.query! })).toEqual({ status: 200, body: { data: { stored: 1 } } });
    const again: Sent[] = [];
    const second = await client(again).query(document, {}).toPromise();
    expect(second.data).toEqual(plainViewer());
    expect(again).toEqual([{ method: 'GET', query: null, hash: sent[0]!.hash }]);
  });
});

describe("Apollo Client's PersistedQueryLink", () => {
  const client = (sent: Sent[], options: { useGETForHashedQueries?: boolean } = {}) =>
    new ApolloClient({
      cache: new InMemoryCache(),
      link: ApolloLink.from([
        new PersistedQueryLink({ sha256, ...options }),
        new HttpLink({ uri: endpoint, headers, fetch: recordingFetch(sent) }),
      ]),
    });
  const document = parse('query ApolloViewer { viewer { workspace { id name } } }');

  it('falls back to the text on PersistedQueryNotFound, on POST and on GET, and the server registers nothing', async () => {
    for (const useGETForHashedQueries of [false, true]) {
      const sent: Sent[] = [];
      const result = await client(sent, { useGETForHashedQueries }).query({ query: document, fetchPolicy: 'network-only' });
      expect(result.error).toBeUndefined();
      expect(result.data).toEqual(typedViewer());
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatchObject({ method: useGETForHashedQueries ? 'GET' : 'POST', query: null, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(sent[1]).toMatchObject({ method: 'POST', hash: sent[0]!.hash, query: expect.stringContaining('ApolloViewer') });
    }
    expect(Object.values(await storedDocuments(db, w.workspace.id)).filter((text) => text.includes('ApolloViewer'))).toEqual([]);
  });

  it('sends the hash alone once the workspace has registered the text it sends', async () => {
    const probe: Sent[] = [];
    await client(probe).query({ query: document, fetchPolicy: 'network-only' });
    const [hash, text] = [probe[1]!.hash!, probe[1]!.query!];
    expect(await registerOverHttp({ [hash]: text })).toEqual({ status: 200, body: { data: { stored: 1 } } });

    const sent: Sent[] = [];
    const result = await client(sent).query({ query: document, fetchPolicy: 'network-only' });
    expect(result.data).toEqual(typedViewer());
    expect(sent).toEqual([{ method: 'POST', query: null, hash }]);
  });
});
