import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` + base64 of a random key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function key(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the decoded secret. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Checks a `webhook-signature` header (space-separated `v1,…` entries), as a receiver would. */
export function verifyWebhook(secret: string, id: string, timestamp: number, body: string, header: string): boolean {
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
