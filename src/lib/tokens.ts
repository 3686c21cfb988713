import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefixes, so that secret scanners can find leaked credentials. */
export const TOKEN_PREFIX = { channelKey: 'cak_', connection: 'cct_' } as const;

export function generateToken(prefix: string): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** Tokens are 256 random bits, so a plain SHA-256 is a safe one-way digest for lookup. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The non-secret start of a token, kept to tell keys apart. */
export function displayPrefix(token: string): string {
  return token.slice(0, 12);
}
