import { randomUUID } from 'node:crypto';

/**
 * An incoming `X-Request-Id` the server keeps (docs/operations.md, "Tracing a request"): 1 to 128
 * characters of letters, digits and `.` `_` `:` `-`, so that it is safe in a header, a log line
 * and a file name. Anything else — empty, longer, spaces, quotes, non-ASCII — is replaced.
 */
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: a valid incoming `X-Request-Id`, else a new UUID. */
export function requestIdOf(headers: Pick<Headers, 'get'>): string {
  const given = headers.get('x-request-id');
  return given !== null && VALID_REQUEST_ID.test(given) ? given : randomUUID();
}

/** W3C Trace Context: version, trace id, parent id, flags (a later version may append fields). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The trace id of a valid W3C `traceparent` header, or undefined: version `ff` and all-zero ids
 * are invalid, and version `00` has exactly four fields.
 */
export function traceIdOf(header: string | null | undefined): string | undefined {
  const match = header ? TRACEPARENT.exec(header.trim()) : null;
  if (!match) return undefined;
  const [, version, traceId, parentId, , rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  return traceId;
}

/**
 * The trace id of the span the request runs in, when OpenTelemetry is on (src/telemetry.ts sets
 * it): then a request without `traceparent` is logged under the trace the SDK began for it.
 */
let activeTraceId: (() => string | undefined) | undefined;

export function useActiveTraceId(source: () => string | undefined): void {
  activeTraceId = source;
}

/** The trace a request belongs to: the active span's when tracing is on, else the incoming `traceparent`'s. */
export function requestTraceId(headers: Pick<Headers, 'get'>): string | undefined {
  return activeTraceId?.() ?? traceIdOf(headers.get('traceparent'));
}
