import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's request signature (docs/channels.md): `X-Twilio-Signature` is the base64 HMAC-SHA1, keyed
 * with the account's auth token, of the URL Twilio requested followed by each form parameter's
 * name and value, the names in sorted order (a repeated name: each distinct value, sorted). Every
 * parameter counts, those the gateway does not read included.
 */

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Whether the header has the signature's form at all: base64 of the 20 bytes of an HMAC-SHA1. */
export function twilioSignatureWellFormed(header: string | null): header is string {
  return header !== null && /^[A-Za-z0-9+/]{27}=$/.test(header.trim());
}

/** The form's values by name, as Twilio's signature reads them. */
function grouped(params: Iterable<[string, string]>): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const [name, value] of params) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  return byName;
}

/** The signature Twilio sends for a request to `url` with these form parameters (the fake and the tests sign with it). */
export function twilioSignature(authToken: string, url: string, params: Iterable<[string, string]>): string {
  const byName = grouped(params);
  let data = url;
  // Sorted as Twilio's own libraries sort: by UTF-16 code unit, names and then each name's distinct values.
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...new Set(byName.get(name))].sort()) data += name + value;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** `url` without its port, and with its scheme's default port when it has none: Twilio may have signed either. */
function urlForms(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!match) return [url];
  const [prefix, scheme, authority] = match as unknown as [string, string, string];
  const rest = url.slice(prefix.length);
  const userInfo = authority.slice(0, authority.lastIndexOf('@') + 1);
  const hostAndPort = authority.slice(userInfo.length);
  // A colon starts the port only after an IPv6 literal's closing bracket.
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  const host = portStart === -1 ? hostAndPort : hostAndPort.slice(0, portStart);
  const port = portStart === -1 ? '' : hostAndPort.slice(portStart);
  const withPort = port ? url : scheme + userInfo + host + (scheme.toLowerCase() === 'https://' ? ':443' : ':80') + rest;
  return [...new Set([scheme + userInfo + host + rest, withPort])];
}

/**
 * Whether `header` is Twilio's signature of a request to `url` with these parameters, under the
 * auth token: compared in constant time, for the URL with and without its port (as Twilio's
 * libraries accept it).
 */
export function verifyTwilioSignature(header: string | null, authToken: string, url: string, params: [string, string][]): boolean {
  if (!twilioSignatureWellFormed(header) || !authToken) return false;
  const given = Buffer.from(header.trim(), 'base64');
  let valid = false;
  for (const candidate of urlForms(url)) {
    const expected = Buffer.from(twilioSignature(authToken, candidate, params), 'base64');
    // Every form is computed and compared: how long the check takes says nothing of which matched.
    valid = (given.length === expected.length && timingSafeEqual(given, expected)) || valid;
  }
  return valid;
}
