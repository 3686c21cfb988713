import http from 'node:http';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { uniqueHost } from './factories.js';
import { testSealer } from './secrets.js';

/**
 * A migrated PostgreSQL database of its own on the run's server, with its URL: for
 * a server process or delivery worker that must not touch other tests' rows.
 */
export async function migratedDatabase(prefix: string, poolSize = 4): Promise<{ url: string; db: Database; drop(): Promise<void> }> {
  const database = await createTemporaryDatabase(inject('databaseUrl'), prefix);
  const db = await openDatabase({ databaseUrl: database.url, poolSize });
  await db.withSession((session) => migrate(session));
  return {
    url: database.url,
    db,
    async drop() {
      await db.close();
      await database.drop();
    },
  };
}

/** A workspace with one channel (optionally delivering to `webhookUrl`) and that channel's key. */
export async function loadChannel(db: Database, webhookUrl?: string) {
  const workspace = await createWorkspace(db.prisma, { hostname: uniqueHost('load'), name: 'Load' });
  const { channel, apiKey } = await createChannel(db.prisma, { workspaceId: workspace.id, name: 'Load channel', type: 'whatsapp', webhookUrl }, testSealer);
  return { workspace, channel, apiKey, host: workspace.hostname };
}

/** What became of one HTTP request: its answer, or the error that ended it; with its timing. */
export interface Outcome {
  status?: number;
  body?: any;
  headers?: http.IncomingHttpHeaders;
  /** Node's error code (ECONNREFUSED, ECONNRESET…) or message when no answer arrived. */
  error?: string;
  started: number;
  ended: number;
}

/** One request over node's own HTTP client, so that connection-level failures are visible as such. */
export function request(
  base: string,
  options: { method: string; path: string; host: string; headers?: Record<string, string>; body?: unknown; agent?: http.Agent | false; timeoutMs?: number },
): Promise<Outcome> {
  const started = Date.now();
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    const done = (outcome: Omit<Outcome, 'started' | 'ended'>) => resolve({ ...outcome, started, ended: Date.now() });
    const req = http.request(
      `${base}${options.path}`,
      {
        method: options.method,
        agent: options.agent,
        headers: {
          host: options.host,
          accept: 'application/json',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...options.headers,
        },
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // Kept as text: the assertion shows it.
          }
          done({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
        res.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'TIMEOUT' })));
    req.on('error', (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message }));
    req.end(payload);
  });
}

/** A valid Dutch mobile number in E.164, distinct for each `n` below 10⁷. */
export function phone(n: number): string {
  return `+3161${String(n % 10_000_000).padStart(7, '0')}`;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
