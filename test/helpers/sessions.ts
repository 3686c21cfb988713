import type { TestApp } from './app.js';
import { messagingSetup } from './messaging.js';
import { restClient, type RestClient } from './rest.js';

export interface MintedSession {
  id: string;
  token: string;
  user: { id: string; name: string; email: string };
  scopes: string[];
  channels: string[];
  origins: string[];
  expiresAt: string;
  createdAt: string;
}

/** Mints a session over REST with a backend client; fails unless it is minted. */
export async function mintSession(backend: RestClient, body: Record<string, unknown>): Promise<MintedSession> {
  const minted = await backend.post('/sessions', body);
  if (minted.status !== 201) throw new Error(`session not minted: ${minted.status} ${JSON.stringify(minted.body)}`);
  return minted.body.data.session as MintedSession;
}

/** A messaging setup (src: test/helpers/messaging.ts) with a session for its user, and REST clients for both. */
export async function sessionSetup(app: TestApp, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const s = await messagingSetup(app);
  const session = await mintSession(s.api, { user: s.user.email, ...body });
  return { ...s, session, browser: restClient(app, s.host, session.token, headers) };
}
