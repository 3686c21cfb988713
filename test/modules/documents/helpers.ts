import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Plugin } from 'graphql-yoga';
import { createApp } from '../../../src/app.js';
import { createCredentialCache, type CredentialCache } from '../../../src/context/credential-cache.js';
import type { Database } from '../../../src/db/database.js';
import { loadEnv } from '../../../src/env.js';
import { createLogger } from '../../../src/logger.js';
import { createUser } from '../../../src/modules/users/users.service.js';
import { fetchThrough } from '../../helpers/app.js';
import { TEST_SECRETS_KEY, testSealer } from '../../helpers/secrets.js';
import { testProviders } from '../../helpers/worker.js';
import { bearer } from '../../helpers/factories.js';

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A manifest of texts under their bare hex SHA-256 (the client preset writes `sha256:<hex>`; both are taken). */
export const manifestOf = (...texts: string[]) => Object.fromEntries(texts.map((text) => [sha256(text), text]));

export interface DocumentsApp {
  db: Database;
  /** The app's credential cache, which a test may hand a caller that no credential of today's database can be. */
  credentialCache: CredentialCache;
  fetch(host: string, path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The app as createTestApp builds it (the production logger, providers and settings of the tests),
 * with yoga plugins of the test's own after the app's, settings of its own over those (`env`), and
 * a credential cache kept for an hour.
 * `db` stays open when the app closes.
 */
export async function documentsApp(db: Database, options: { plugins?: Plugin[]; env?: Record<string, string> } = {}): Promise<DocumentsApp> {
  const env = loadEnv({ NODE_ENV: 'test', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '1000000', SECRETS_KEY: TEST_SECRETS_KEY, ...options.env });
  const logger = createLogger({ ...env, LOG_LEVEL: 'silent' }, new Writable({ write: (_chunk, _encoding, done) => done() }));
  const credentialCache = createCredentialCache({ ttlMs: 3_600_000, logger })!;
  const providers = testProviders();
  const yoga = createApp({ db, env, logger, sealer: testSealer, providers, credentialCache }, { plugins: options.plugins ?? [] });
  return {
    db,
    credentialCache,
    fetch: fetchThrough(yoga),
    async close() {
      await yoga.dispose();
      await credentialCache.dispose();
      await providers.close();
    },
  };
}

/**
 * A browser's credential: a session token minted over REST by `apiKey` for a new user of the
 * workspace at `host`, with every scope (docs/browser-apps.md).
 */
export async function sessionCaller(app: DocumentsApp, host: string, apiKey: string): Promise<string> {
  const workspace = await app.db.prisma.workspace.findUniqueOrThrow({ where: { hostname: host } });
  const email = `agent-${randomUUID()}@example.com`;
  await createUser(app.db.prisma, { workspaceId: workspace.id, name: 'Agent', email });
  const minted = await app.fetch(host, '/api/connect/sessions', {
    method: 'POST',
    headers: { ...bearer(apiKey), 'content-type': 'application/json' },
    body: JSON.stringify({ user: email }),
  });
  if (minted.status !== 201) throw new Error(`session not minted: ${minted.status} ${await minted.text()}`);
  return ((await minted.json()) as { data: { session: { token: string } } }).data.session.token;
}

export interface GraphQLAnswer {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** POSTs a GraphQL request body as it is (`documentId`, `extensions`, `query`…) to /graphql. */
export async function postGraphQL(app: Pick<DocumentsApp, 'fetch'>, host: string, token: string, body: unknown): Promise<GraphQLAnswer> {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as GraphQLAnswer['body'] };
}

/** GETs /graphql with `params` as query parameters (objects as JSON). */
export async function getGraphQL(app: Pick<DocumentsApp, 'fetch'>, host: string, token: string, params: Record<string, unknown>): Promise<GraphQLAnswer> {
  const query = new URLSearchParams(Object.entries(params).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]));
  const response = await app.fetch(host, `/graphql?${query}`, { headers: { ...bearer(token), accept: 'application/graphql-response+json' } });
  return { status: response.status, body: (await response.json()) as GraphQLAnswer['body'] };
}

/** POSTs a manifest (or any body) to the registration endpoint. */
export async function register(app: Pick<DocumentsApp, 'fetch'>, host: string, token: string, manifest: unknown, headers: Record<string, string> = {}) {
  const response = await app.fetch(host, '/api/connect/graphql/documents', {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', ...headers },
    body: typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** The workspace's registered documents, hash to text. */
export async function storedDocuments(db: Database, workspaceId: string): Promise<Record<string, string>> {
  const rows = await db.prisma.graphqlDocument.findMany({ where: { workspaceId }, orderBy: { hash: 'asc' } });
  return Object.fromEntries(rows.map((row) => [row.hash, row.body]));
}
