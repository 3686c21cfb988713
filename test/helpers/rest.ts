import type { TestApp } from './app.js';
import { bearer } from './factories.js';

export interface RestResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A REST client for one workspace host and credential, through the app's fetch. */
export function restClient(app: TestApp, host: string, token: string, extraHeaders: Record<string, string> = {}) {
  async function call(method: string, path: string, body?: unknown, raw?: string): Promise<RestResult> {
    const headers: Record<string, string> = { ...bearer(token), ...extraHeaders };
    if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
    const response = await app.fetch(host, `/api/connect${path}`, {
      method,
      headers,
      ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }
  return {
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown) => call('POST', path, body),
    patch: (path: string, body?: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
    patchRaw: (path: string, raw: string) => call('PATCH', path, undefined, raw),
    postRaw: (path: string, raw: string) => call('POST', path, undefined, raw),
  };
}

export type RestClient = ReturnType<typeof restClient>;
