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

/** Whether outbound targets may be private addresses (CONTRACT §5). */
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

export interface OutboundClient {
  /**
   * `fetch` for a URL the gateway did not choose: refused (OutboundTargetError) by its form or
   * policy before anything is sent, never redirected (a 3xx is answered as it is), aborted when
   * its headers take longer than the client's timeout or when `init.signal` aborts.
   */
  fetch(url: string, init?: RequestInit): Promise<Response>;
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
  return {
    async fetch(raw, init = {}) {
      const problem = targetFormProblem(raw);
      if (problem) throw new OutboundTargetError(`the URL ${problem}`);
      const url = new URL(raw);
      // A socket to an address written in the URL is opened without a lookup: judged here.
      const literal = literalAddress(url);
      const range = options.policy === 'deny' && literal ? nonPublicClass(literal) : null;
      if (literal && range) throw refusal(url.hostname, literal, range);
      // The timeout bounds the wait for the answer's head only: once headers arrive the timer is
      // cleared, so a large body streams on (the agent's bodyTimeout still ends a stalled one).
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException(`no answer within ${options.timeoutMs} ms`, 'TimeoutError')), options.timeoutMs);
      const signal = init.signal ? AbortSignal.any([timeout.signal, init.signal]) : timeout.signal;
      try {
        return await fetch(url, { ...init, redirect: 'manual', dispatcher, signal });
      } catch (error) {
        throw targetErrorOf(error) ?? error;
      } finally {
        clearTimeout(timer);
      }
    },
    // Its connections closed at once: a request still under way is abandoned, not waited for.
    close: () => dispatcher.destroy(),
  };
}

/** The policy's refusal behind a failed fetch (undici wraps the socket's error as the cause), if it was one. */
function targetErrorOf(error: unknown): OutboundTargetError | null {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundTargetError) return cause;
  }
  return null;
}
