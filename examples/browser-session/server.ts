import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The page's backend: it serves the built page, signs agents in, and mints gateway sessions for
// them with a backend credential that never leaves this process. The page talks to the gateway
// directly with the session token; it never sees the credential.

export interface BackendOptions {
  /** The gateway's base URL as a browser reaches it; its hostname chooses the workspace (`http://localhost:4000` for the demo). */
  gatewayUrl: string;
  /** A backend credential of the workspace: a channel API key (`cak_…`) or a connection token (`cct_…`). */
  apiKey: string;
  /** The built page (`vite build`'s output directory). */
  staticDir: string;
  /** Session lifetime in seconds (60–86400). */
  ttlSeconds?: number;
  /** What the minted sessions may do (default `read` and `send`; `conversations` adds assigning and marking read). */
  scopes?: ('read' | 'send' | 'contacts' | 'conversations')[];
  /** Called with each session minted (its id, never its token), e.g. for an audit log. */
  onMint?(session: { id: string; user: string; expiresAt: string }): void;
}

interface GatewaySession {
  id: string;
  token: string;
  user: { id: string; name: string; email: string };
  expiresAt: string;
}

const COOKIE = 'agent';
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/**
 * The backend's request handler. Sign-in here is a stand-in: `POST /api/login` believes the email
 * it is given and sets a signed cookie naming it. A real deployment puts its own login (SSO, a
 * password, an identity provider) there and maps the signed-in person to their workspace user.
 * Everything else is what a real backend does:
 *
 * - `POST /api/session` mints a session for the signed-in agent (`POST /api/connect/sessions`),
 *   scoped to reading and sending, usable only from this page's origin, and answers
 *   `{ token, expiresAt, gatewayUrl, user }`. The page calls it again to refresh.
 * - `POST /api/logout` forgets the agent and revokes every session of theirs, so their open
 *   pages stop within seconds.
 */
export function createBackend(options: BackendOptions): http.RequestListener {
  const secret = randomBytes(32);
  const sign = (email: string) => `${Buffer.from(email).toString('base64url')}.${createHmac('sha256', secret).update(email).digest('base64url')}`;
  const signedIn = (request: http.IncomingMessage): string | null => {
    const cookie = /(?:^|;\s*)agent=([^;]+)/.exec(request.headers.cookie ?? '')?.[1];
    const [encoded, mac] = cookie?.split('.') ?? [];
    if (!encoded || !mac) return null;
    const email = Buffer.from(encoded, 'base64url').toString();
    const expected = Buffer.from(sign(email).split('.')[1]!);
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given) ? email : null;
  };

  const gateway = (method: string, route: string, body?: unknown) =>
    fetch(new URL(`/api/connect${route}`, options.gatewayUrl), {
      method,
      headers: { authorization: `Bearer ${options.apiKey}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  return async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://backend');
    try {
      if (url.pathname.startsWith('/api/')) {
        if (request.method !== 'POST') return send(response, 405, { message: 'Method not allowed.' });
        // A form on another site cannot send JSON with this header without a preflight, which is refused.
        if (!String(request.headers['content-type']).startsWith('application/json')) return send(response, 415, { message: 'Send JSON.' });
        if (url.pathname === '/api/login') {
          const { email } = (await readJson(request)) as { email?: unknown };
          if (typeof email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(email)) return send(response, 422, { message: 'Enter the email of your workspace user.' });
          response.setHeader('set-cookie', `${COOKIE}=${sign(email.trim().toLowerCase())}; Path=/; HttpOnly; SameSite=Strict`);
          return send(response, 200, { email });
        }
        const email = signedIn(request);
        if (url.pathname === '/api/logout') {
          response.setHeader('set-cookie', `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`);
          if (email) await gateway('DELETE', `/sessions?user=${encodeURIComponent(email)}`);
          return send(response, 200, {});
        }
        if (url.pathname === '/api/session') {
          if (!email) return send(response, 401, { message: 'Sign in first.' });
          // The page's own origin: the session refuses requests from any other site's pages.
          const origin = `http://${request.headers.host}`;
          const minted = await gateway('POST', '/sessions', { user: email, ttl_seconds: options.ttlSeconds ?? 900, scopes: options.scopes ?? ['read', 'send'], origins: [origin] });
          const body = (await minted.json()) as { data?: { session: GatewaySession }; message?: string; errors?: Record<string, string[]> };
          if (minted.status !== 201 || !body.data) {
            // An unknown user is the gateway's 422 on `user`: this agent has no workspace user.
            const message = minted.status === 422 ? (body.errors?.user?.[0] ?? body.message) : 'The gateway refused to mint a session.';
            return send(response, minted.status === 422 ? 403 : 502, { message });
          }
          const { session } = body.data;
          options.onMint?.({ id: session.id, user: session.user.email, expiresAt: session.expiresAt });
          return send(response, 200, { token: session.token, expiresAt: session.expiresAt, gatewayUrl: options.gatewayUrl, user: session.user });
        }
        return send(response, 404, { message: 'Not found.' });
      }
      return await serveFile(options.staticDir, url.pathname, response);
    } catch {
      if (!response.headersSent) send(response, 500, { message: 'Something went wrong.' });
      else response.destroy();
    }
  };
}

/**
 * The deploy step: registers the page's documents (`manifest`, by default this page's
 * src/gql/persisted-documents.json) with the gateway, so that the page may name them by id.
 * Returns how many were new.
 */
export async function registerDocuments(
  options: Pick<BackendOptions, 'gatewayUrl' | 'apiKey'>,
  manifestFile = fileURLToPath(new URL('./src/gql/persisted-documents.json', import.meta.url)),
): Promise<number> {
  const manifest = await readFile(manifestFile, 'utf8');
  const response = await fetch(new URL('/api/connect/graphql/documents', options.gatewayUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
    body: manifest,
  });
  const body = (await response.json()) as { data?: { stored: number }; message?: string };
  if (response.status !== 200 || !body.data) throw new Error(`The gateway refused the page's documents: HTTP ${response.status} ${body.message ?? ''}`);
  return body.data.stored;
}

async function serveFile(root: string, pathname: string, response: http.ServerResponse): Promise<void> {
  const base = path.resolve(root);
  let file = path.resolve(base, `.${decodeURIComponent(pathname)}`);
  if (file !== base && !file.startsWith(`${base}${path.sep}`)) return send(response, 404, { message: 'Not found.' });
  if (file === base || !path.extname(file)) file = path.join(base, 'index.html');
  const content = await readFile(file).catch(() => null);
  if (!content) return send(response, 404, { message: 'Not found.' });
  response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
  response.end(content);
}

function send(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > 10_000) throw new Error('body too large');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

// `npx tsx examples/browser-session/server.ts`: the backend on PORT, for the gateway at CONNECT_URL
// (README.md). It serves the page that `npx vite build examples/browser-session` wrote to dist/.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const gatewayUrl = process.env.CONNECT_URL ?? 'http://localhost:4000';
  const apiKey = process.env.CONNECT_API_KEY;
  if (!apiKey) throw new Error('Set CONNECT_API_KEY to a channel API key or connection token of the workspace.');
  const port = Number(process.env.PORT ?? 5180);
  const ttlSeconds = Number(process.env.SESSION_TTL_SECONDS ?? 900);
  const staticDir = fileURLToPath(new URL('./dist', import.meta.url));
  const stored = await registerDocuments({ gatewayUrl, apiKey });
  console.log(`Registered the page's documents with ${gatewayUrl} (${stored} new).`);
  const onMint = (session: { id: string; user: string; expiresAt: string }) => console.log(`Session ${session.id} for ${session.user} until ${session.expiresAt}`);
  http.createServer(createBackend({ gatewayUrl, apiKey, staticDir, ttlSeconds, onMint })).listen(port, '127.0.0.1', () => {
    console.log(`Agent inbox on http://localhost:${port} (add it to the gateway's CORS_ORIGINS).`);
  });
}
