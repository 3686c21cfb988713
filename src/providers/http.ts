import type { SendOutcome } from './provider.js';

/** The HTTP client providers call their APIs with: fetch, bounded by a timeout, never redirected. */
export interface ProviderHttp {
  fetch(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response>;
  readonly timeoutMs: number;
}

/** A provider API's answer: its status and JSON (null when the body is none or not JSON). */
export interface ProviderAnswer {
  status: number;
  json: unknown;
}

/**
 * One request to a provider's API. A network failure or a timeout is a `retry` outcome (the
 * request may or may not have been taken: the outbox tries again); any answer is returned.
 */
export async function providerRequest(
  http: ProviderHttp,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
): Promise<ProviderAnswer | Extract<SendOutcome, { kind: 'retry' }>> {
  let response: Response;
  try {
    response = await http.fetch(url, init);
  } catch (error) {
    const name = (error as Error).name;
    const reason = name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${http.timeoutMs} ms` : (error as Error).message;
    return { kind: 'retry', reason: `provider unreachable: ${reason}` };
  }
  const text = await response.text().catch(() => '');
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: response.status, json };
}
