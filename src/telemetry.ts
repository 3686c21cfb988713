import { createRequire } from 'node:module';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span } from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Env } from './env.js';
import { useActiveTraceId } from './http/request-id.js';
import { useActiveTraceparent, type SpanAttributes, type Tracing } from './lib/tracing.js';

/*
 * OpenTelemetry traces (docs/operations.md#tracing), loaded by src/main.ts only when an OTLP
 * endpoint is set, and started before anything that uses node:http or pg is loaded: the SDK,
 * an OTLP exporter over HTTP (protobuf or JSON), the http and pg instrumentations, and
 * @envelop/opentelemetry's span for each GraphQL operation. An incoming `traceparent` is
 * continued (the W3C propagator), so one request is one trace: its HTTP server span, the GraphQL
 * operation or REST handler beneath it, and each SQL statement beneath those.
 */

/** The tracer of the project's own spans (REST handlers, delivery attempts) and the GraphQL plugin's. */
const TRACER = 'connect-gateway';

export interface Telemetry {
  /** Spans for the project's own work (src/lib/tracing.ts). */
  tracing: Tracing;
  /** yoga plugins: a span for each GraphQL operation. */
  plugins: Plugin[];
  /** Exports the spans still buffered, then stops the SDK. */
  shutdown(): Promise<void>;
}

/** The OTLP exporter the settings name: JSON or protobuf over HTTP (src/env.ts refuses anything else). */
async function traceExporter(env: Env) {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

/** A client span's URL attributes with the query replaced by `REDACTED` (OpenTelemetry's HTTP conventions allow it). */
function withoutQuery(origin: string, path: string): SpanAttributes {
  const query = path.indexOf('?');
  if (query < 0) return {};
  return { 'url.full': `${origin}${path.slice(0, query)}?REDACTED`, 'url.query': 'REDACTED' };
}

function finish(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/**
 * Starts the SDK. The exporter reads the endpoint, headers, timeout and compression from the
 * standard OTEL_EXPORTER_OTLP_* variables; the sampler, propagators, resource attributes and
 * batching from theirs. Only traces are exported: metrics stay on /metrics, logs on stdout.
 */
export async function startTelemetry(env: Env, logger: Logger): Promise<Telemetry> {
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { UndiciInstrumentation }, { useOpenTelemetry }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
    import('@envelop/opentelemetry'),
  ]);
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME,
    traceExporter: await traceExporter(env),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Headers and bodies are never recorded: only the method, route, status and peer.
      new HttpInstrumentation(),
      // Statements without their parameters' values, and only within a request or a delivery
      // attempt: the worker's polling is not a trace of its own every second.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // The providers' and event endpoints' requests (undici's fetch, src/lib/outbound-http.ts),
      // within a delivery attempt or a request, with the URL's query left out: an endpoint's URL
      // may carry a token there.
      new UndiciInstrumentation({ requireParentforSpans: true, startSpanHook: (request) => withoutQuery(request.origin, request.path) }),
    ],
  });
  sdk.start();
  // The instrumentations patch a module when it is required after this point. node:http is
  // already loaded (by src/main.ts), and an ES module's import of it or of pg need not pass the
  // CommonJS hooks: requiring both here hands them to the hooks once, whatever loads them later
  // (pg requires its pool), and the patches (node:http's Server, pg's Client and Pool prototypes)
  // hold for every importer of the same modules.
  const require = createRequire(import.meta.url);
  for (const name of ['node:http', 'node:https', 'pg']) require(name);

  // Log lines of a request carry the trace the SDK runs it in (src/http/state.ts).
  useActiveTraceId(() => {
    const context = trace.getActiveSpan()?.spanContext();
    return context && trace.isSpanContextValid(context) ? context.traceId : undefined;
  });

  // A delivery queued by a request keeps the request's traceparent: its attempts join that trace.
  useActiveTraceparent(() => {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier['traceparent'] ?? null;
  });

  const tracer = trace.getTracer(TRACER);
  const tracing: Tracing = {
    span<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>, options: { root?: boolean; parent?: string | null } = {}) {
      const parent = options.parent ? propagation.extract(ROOT_CONTEXT, { traceparent: options.parent }) : undefined;
      const within = parent && trace.getSpanContext(parent) ? parent : options.root ? ROOT_CONTEXT : context.active();
      return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, within, async (span) => {
        try {
          const result = await work();
          finish(span);
          return result;
        } catch (error) {
          finish(span, error);
          throw error;
        }
      });
    },
  };
  // The operation's span beneath the HTTP server span: its type and name, its document when it
  // holds no inline argument (which could carry personal data); never variables, results or resolvers.
  const graphql = useOpenTelemetry({ resolvers: false, variables: false, result: false }, trace.getTracerProvider(), SpanKind.INTERNAL, {}, TRACER) as Plugin;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  logger.info({ protocol }, 'starting: exporting traces over OTLP');
  return {
    tracing,
    plugins: [graphql],
    shutdown: () => sdk.shutdown(),
  };
}
