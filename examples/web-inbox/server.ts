import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBackend, registerDocuments } from '../browser-session/server.js';

// The inbox's backend is the browser session example's (../browser-session/server.ts): the same
// stand-in sign-in, the same session minting with the backend credential, the same sign-out. The
// inbox's sessions also carry the `conversations` scope (assign, mark read). This file only puts
// the page beside it: the built page (dist/), or Vite's dev server for working on the page.

const here = path.dirname(fileURLToPath(import.meta.url));

export interface InboxServerOptions {
  /** The gateway's base URL as a browser reaches it; its hostname chooses the workspace (`http://localhost:4000` for the demo). */
  gatewayUrl: string;
  /** A backend credential of the workspace: a channel API key (`cak_…`) or a connection token (`cct_…`). */
  apiKey: string;
  /** The port to listen on (0: any free one). The page's origin `http://localhost:PORT` must be in the gateway's CORS_ORIGINS. */
  port: number;
  /** `dev`: Vite's dev server (edits reload the page); `built`: the output of `npx vite build examples/web-inbox`, or of `staticDir`. */
  mode: 'dev' | 'built';
  staticDir?: string;
  ttlSeconds?: number;
  onMint?(session: { id: string; user: string; expiresAt: string }): void;
}

export interface InboxServer {
  /** `http://localhost:PORT`: the page's origin. */
  url: string;
  close(): Promise<void>;
}

/** Registers the page's documents with the gateway, then serves the page and its backend on one origin. */
export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  await registerDocuments(options, path.join(here, 'src/gql/persisted-documents.json'));
  const backend = createBackend({
    gatewayUrl: options.gatewayUrl,
    apiKey: options.apiKey,
    staticDir: options.staticDir ?? path.join(here, 'dist'),
    scopes: ['read', 'send', 'conversations'],
    ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
    ...(options.onMint ? { onMint: options.onMint } : {}),
  });
  const server = http.createServer();
  // Every socket, upgraded ones (Vite's reload channel) included, to end them on close.
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let closeVite = async () => {};
  if (options.mode === 'dev') {
    const { createServer } = await import('vite');
    const vite = await createServer({ configFile: path.join(here, 'vite.config.ts'), root: here, server: { middlewareMode: true, hmr: { server } }, appType: 'spa' });
    closeVite = () => vite.close();
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) =>
      request.url?.startsWith('/api/') ? void backend(request, response) : vite.middlewares(request, response),
    );
  } else {
    server.on('request', backend);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    async close() {
      await closeVite();
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

// `npx tsx examples/web-inbox/server.ts`: the inbox on PORT (default 5190) for the gateway at
// CONNECT_URL, with Vite's dev server (`INBOX_MODE=built` serves dist/ instead).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const apiKey = process.env.CONNECT_API_KEY;
  if (!apiKey) throw new Error('Set CONNECT_API_KEY to a channel API key or connection token of the workspace.');
  const inbox = await startInboxServer({
    gatewayUrl: process.env.CONNECT_URL ?? 'http://localhost:4000',
    apiKey,
    port: Number(process.env.PORT ?? 5190),
    mode: process.env.INBOX_MODE === 'built' ? 'built' : 'dev',
    ttlSeconds: Number(process.env.SESSION_TTL_SECONDS ?? 900),
  });
  console.log(`Inbox on ${inbox.url} (add it to the gateway's CORS_ORIGINS).`);
  const stop = () => void inbox.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
