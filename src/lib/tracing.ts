/**
 * Spans for the project's own work where no instrumentation makes one (docs/operations.md#tracing):
 * a REST route's handler and a delivery attempt. src/telemetry.ts supplies it when OpenTelemetry is
 * on; when it is off nothing is supplied and the work runs as it is, at no cost.
 */
export interface Tracing {
  /**
   * Runs `work` in a span named `name`: a child of the active span, or with `root`, the first span
   * of a trace of its own. The span ends when `work` settles; a failure is recorded on it.
   */
  span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>, options?: { root?: boolean }): Promise<T>;
}

/** A span's attributes: no secret, no personal data (ids and names of routes, kinds, counts). */
export type SpanAttributes = Record<string, string | number | boolean>;
