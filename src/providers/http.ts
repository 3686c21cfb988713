import type { OutboundExchange } from '../lib/outbound-http.js';
import type { SendOutcome } from './provider.js';

/**
 * The HTTP client providers call their APIs with: one request and its whole answer within one
 * deadline (`timeoutMs`, DELIVERY_TIMEOUT_MS, for head and body together), never redirected.
 */
export interface ProviderHttp {
  exchange(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<OutboundExchange>;
  readonly timeoutMs: number;
}

/** A provider API's answer: its status and JSON (null when the body is none, truncated or not JSON). */
export interface ProviderAnswer {
  status: number;
  json: unknown;
  /** False when the body was truncated (the deadline, the connection). */
  complete: boolean;
  /** The answer's `Retry-After` header as given, if any. */
  retryAfter: string | null;
}

/**
 * One request to a provider's API. A network failure or no answer's head within the deadline is
 * a `retry` outcome (the request may or may not have been taken: the outbox tries again); any
 * answer is returned, however much of its body arrived before the deadline, so that a status the
 * provider gave is never lost to a slow body.
 */
export async function providerRequest(
  http: ProviderHttp,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<ProviderAnswer | Extract<SendOutcome, { kind: 'retry' }>> {
  let answer: OutboundExchange;
  try {
    answer = await http.exchange(url, init);
  } catch (error) {
    const name = (error as Error).name;
    const reason = name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${http.timeoutMs} ms` : (error as Error).message;
    return { kind: 'retry', reason: `provider unreachable: ${reason}` };
  }
  let json: unknown = null;
  try {
    json = answer.complete && answer.body.length ? JSON.parse(answer.body.toString('utf8')) : null;
  } catch {
    json = null;
  }
  return { status: answer.status, json, complete: answer.complete, retryAfter: answer.headers.get('retry-after') };
}
