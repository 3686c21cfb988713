/**
 * Spans for the project's own work where no instrumentation makes one (docs/operations.md#tracing):
 * a REST route's handler and a delivery attempt. src/telemetry.ts supplies it when OpenTelemetry is
 * on; when it is off nothing is supplied and the work runs as it is, at no cost.
 */
export interface Tracing {
  /**
   * Runs `work` in a span named `name`: a child of the active span; with `parent` (a W3C
   * traceparent), of that span; with `root` and no parent, the first span of a trace of its own.
   * The span ends when `work` settles; a failure is recorded on it.
   */
  span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>, options?: { root?: boolean; parent?: string | null }): Promise<T>;
}

/** A span's attributes: no secret, no personal data (ids and names of routes, kinds, counts). */
export type SpanAttributes = Record<string, string | number | boolean>;

/**
 * The W3C traceparent of the active span, stored with a delivery the request queues so that the
 * delivery's attempts join the request's trace; null when tracing is off (src/telemetry.ts sets
 * the source once, as it sets the trace id of log lines: the OpenTelemetry context is the
 * process's own).
 */
let traceparentSource: (() => string | null) | undefined;

export function useActiveTraceparent(source: () => string | null): void {
  traceparentSource = source;
}

export function activeTraceparent(): string | null {
  return traceparentSource ? traceparentSource() : null;
}
