import type { AuthContext } from './types.js';
import { ChannelSelectionError } from '../errors/domain.js';

/**
 * The workspace hostname of a request: the Host header lowercased without port
 * (X-Forwarded-Host first when the server sits behind a trusted proxy).
 */
export function requestHost(headers: Headers, trustProxy: boolean): string | null {
  const forwarded = trustProxy ? headers.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined;
  const raw = forwarded || headers.get('host');
  if (!raw) return null;
  const host = raw.startsWith('[') ? raw.slice(0, raw.indexOf(']') + 1) : raw.replace(/:\d*$/, '');
  return host.toLowerCase().replace(/\.$/, '') || null;
}

export function bearerToken(headers: Headers): string | null {
  const match = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(headers.get('authorization') ?? '');
  return match?.[1] ?? null;
}

/** The acting channel, required by every operation except listing channels. */
export function actingChannel(auth: AuthContext) {
  if (!auth.channel) throw new ChannelSelectionError();
  return auth.channel;
}
