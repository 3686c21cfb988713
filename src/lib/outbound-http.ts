import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, fetch, type RequestInit, type Response } from 'undici';

/**
 * The one HTTP client for URLs the gateway did not choose itself: event subscription URLs,
 * channel webhook URLs, and media links a provider hands over. It never follows a redirect,
 * gives up after a timeout, and under the `deny` policy (WEBHOOK_PRIVATE_TARGETS) refuses any
 * target that is, or resolves to, an address that is not public — checked against the address
 * it actually connects to, so a name that resolves differently later (DNS rebinding) is refused
 * then too.
 */

/** Whether outbound targets may be private addresses (docs/operating-safely.md, Outbound targets). */
export type TargetPolicy = 'allow' | 'deny';

/** Resolves a host name to its addresses, as `dns.lookup(name, { all: true })` does. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** A target refused by the policy or by its form: the message says which and why, without URL credentials. */
export class OutboundTargetError extends Error {
  override name = 'OutboundTargetError';
}

/**
 * The class of a non-public address (`loopback`, `private`, `linkLocal`, `carrierGradeNat`,
 * `uniqueLocal`, `multicast`, `unspecified`, …), or null for a public unicast one. An IPv4
 * address mapped into IPv6 is judged as itself; every other IPv6 form that embeds an IPv4
 * address (IPv4-compatible `::/96` as `ipv4Compatible`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`
 * as `rfc6052`, 6to4, Teredo) is refused, since the address it reaches is not the one written.
 */
export function nonPublicClass(address: string): string | null {
  const written = address.replace(/^\[|\]$/g, '');
  // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291) written with a dotted tail, which ipaddr.js reads as mapped.
  if (/^::(\d{1,3}\.){3}\d{1,3}$/.test(written)) return ipaddr.isValid(written) ? 'ipv4Compatible' : 'invalid';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(written);
  } catch {
    return 'invalid';
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  // The rest of ::/96 (:: and ::1 have ranges of their own): ipaddr.js takes it for unicast.
  if (range === 'unicast' && parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  return range === 'unicast' ? null : range;
}

/** The URL as it may be shown: without a user name or password. */
export function withoutCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    if (!url.username && !url.password) return raw;
    url.username = '***';
    url.password = '';
    return url.toString();
  } catch {
    return raw.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/** Why a URL cannot be an outbound target by its form alone, or null: http(s), no credentials. */
export function targetFormProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http(s) URL';
  if (url.username || url.password) return 'must not contain a user name or password';
  return null;
}

/** The host of a URL as an address (without brackets) when it is one, else null. */
function literalAddress(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : null;
}

function refusal(host: string, address: string, range: string): OutboundTargetError {
  const how = host === address ? 'is' : `resolves to ${address}, which is`;
  return new OutboundTargetError(
    `${host} ${how} a ${range} address; outbound targets must be public (WEBHOOK_PRIVATE_TARGETS=allow permits private ones)`,
  );
}

/**
 * Checks a URL the way a delivery to it will be checked: its form, then — under `deny` — its
 * host, written as an address in any notation the URL parser understands (`2130706433`,
 * `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`) or resolved through DNS.
 */
export async function checkTarget(raw: string, policy: TargetPolicy, resolve: Resolver = systemResolver): Promise<void> {
  const problem = targetFormProblem(raw);
  if (problem) throw new OutboundTargetError(`the URL ${problem}`);
  if (policy === 'allow') return;
  const url = new URL(raw);
  const literal = literalAddress(url);
  const addresses = literal ? [literal] : (await resolveOrRefuse(url.hostname, resolve)).map((entry) => entry.address);
  for (const address of addresses) {
    const range = nonPublicClass(address);
    if (range) throw refusal(url.hostname, address, range);
  }
}

async function resolveOrRefuse(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  try {
    return await resolve(hostname);
  } catch (error) {
    throw new OutboundTargetError(`${hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` of the client's sockets: resolves as the system does and, under `deny`, fails
 * the connection when any address of the name is not public.
 */
function guardedLookup(policy: TargetPolicy, resolve: Resolver) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    resolve(hostname).then(
      (addresses) => {
        if (policy === 'deny') {
          for (const { address } of addresses) {
            const range = nonPublicClass(address);
            if (range) return callback(Object.assign(refusal(hostname, address, range), { code: 'ETARGETREFUSED' }), []);
          }
        }
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        if (options.all) return callback(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

/** An answer read whole, within one deadline for its head and body together. */
export interface OutboundExchange {
  status: number;
  headers: Headers;
  /** The body as far as it was read. */
  body: Buffer;
  /** False when the body was cut off: the deadline passed, the connection dropped, or it went over the limit. */
  complete: boolean;
}

/** The most of an answer's body `exchange` keeps: providers answer a few hundred bytes of JSON. */
export const EXCHANGE_BODY_LIMIT = 1024 * 1024;

export interface OutboundClient {
  /**
   * `fetch` for a URL the gateway did not choose: refused (OutboundTargetError) by its form or
   * policy before anything is sent, never redirected (a 3xx is answered as it is), aborted when
   * its headers take longer than the client's timeout or when `init.signal` aborts. The body then
   * streams at its reader's pace (the agent's idle timeout ends a stalled one): for media handed
   * on to a client.
   */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /**
   * One request and its whole answer within one deadline, the client's timeout, for the
   * connection, the head and the body together: a server that trickles its body cannot stretch
   * the attempt past it. Throws as `fetch` does when no head arrived in time; a body cut off by
   * the deadline, the connection or `maxBytes` is returned as far as it came, `complete: false`.
   */
  exchange(url: string, init?: RequestInit, maxBytes?: number): Promise<OutboundExchange>;
  /** Closes the client's connections; a request still under way is abandoned. */
  close(): Promise<void>;
}

/** The guarded client; `resolve` replaces the system's DNS (tests). */
export function createOutboundClient(options: { policy: TargetPolicy; timeoutMs: number; resolve?: Resolver }): OutboundClient {
  const resolve = options.resolve ?? systemResolver;
  const dispatcher = new Agent({
    connect: { lookup: guardedLookup(options.policy, resolve) as never, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  /** The URL, once its form and (for an address written in it) the policy allow it. */
  const target = (raw: string): URL => {
    const problem = targetFormProblem(raw);
    if (problem) throw new OutboundTargetError(`the URL ${problem}`);
    const url = new URL(raw);
    // A socket to an address written in the URL is opened without a lookup: judged here.
    const literal = literalAddress(url);
    const range = options.policy === 'deny' && literal ? nonPublicClass(literal) : null;
    if (literal && range) throw refusal(url.hostname, literal, range);
    return url;
  };
  /** A timer that aborts after the client's timeout, with `init.signal` joined to it. */
  const deadline = (init: RequestInit, what: string) => {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException(`${what} within ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs);
    return { signal: init.signal ? AbortSignal.any([timeout.signal, init.signal]) : timeout.signal, clear: () => clearTimeout(timer) };
  };
  const send = async (url: URL, init: RequestInit, signal: AbortSignal) => {
    try {
      return await fetch(url, { ...init, redirect: 'manual', dispatcher, signal });
    } catch (error) {
      throw targetErrorOf(error) ?? error;
    }
  };
  return {
    async fetch(raw, init = {}) {
      const url = target(raw);
      // The timer bounds the wait for the answer's head only: once headers arrive it is cleared.
      const timer = deadline(init, 'no answer');
      try {
        return await send(url, init, timer.signal);
      } finally {
        timer.clear();
      }
    },
    async exchange(raw, init = {}, maxBytes = EXCHANGE_BODY_LIMIT) {
      const url = target(raw);
      const timer = deadline(init, 'no complete answer');
      try {
        const response = await send(url, init, timer.signal);
        const { body, complete } = await readBody(response, maxBytes);
        return { status: response.status, headers: response.headers as unknown as Headers, body, complete };
      } finally {
        timer.clear();
      }
    },
    // Its connections closed at once: a request still under way is abandoned, not waited for.
    close: () => dispatcher.destroy(),
  };
}

/** A body read to its end, or as far as it came before it failed (an abort included) or went over `maxBytes`. */
async function readBody(response: Response, maxBytes: number): Promise<{ body: Buffer; complete: boolean }> {
  if (!response.body) return { body: Buffer.alloc(0), complete: true };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { body: Buffer.concat(chunks), complete: true };
      size += value.byteLength;
      if (size > maxBytes) {
        reader.cancel().catch(() => {});
        return { body: Buffer.concat(chunks), complete: false };
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    }
  } catch {
    return { body: Buffer.concat(chunks), complete: false };
  }
}

/** The policy's refusal behind a failed fetch (undici wraps the socket's error as the cause), if it was one. */
function targetErrorOf(error: unknown): OutboundTargetError | null {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundTargetError) return cause;
  }
  return null;
}
