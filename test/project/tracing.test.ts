import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createTemporaryDatabase } from '../../src/db/temporary.js';
import { createChannel } from '../../src/modules/channels/channels.service.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { createWorkspace } from '../../src/modules/workspaces/workspaces.service.js';
import { onPostgres } from '../helpers/app.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort, requestServer, startServer, waitFor, type ServerProcess } from '../helpers/server-process.js';
import { emailWorkspace } from '../helpers/smtp-fake.js';
import nodemailer from 'nodemailer';
import { testSealer } from '../helpers/secrets.js';

/*
 * OpenTelemetry (docs/operations.md#tracing): the real server process, started with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local OTLP receiver (http/json, so that the test reads
 * what arrives), exports one trace per request continuing the incoming `traceparent` — the HTTP
 * server span, the REST handler or GraphQL operation span beneath it, and a span for each SQL
 * statement beneath that — with the attempts of the deliveries a request queued in its trace; the
 * request's log lines carry the trace id.
 */

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  scope: string;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

/** Every span the receiver was sent, with its instrumentation scope's name. */
function spansOf(bodies: string[]): OtlpSpan[] {
  return bodies.flatMap((body) => {
    const request = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { scope?: { name: string }; spans?: Omit<OtlpSpan, 'scope'>[] }[] }[] };
    return (request.resourceSpans ?? []).flatMap((resource) =>
      (resource.scopeSpans ?? []).flatMap((scoped) => (scoped.spans ?? []).map((span) => ({ ...span, scope: scoped.scope?.name ?? '' }))),
    );
  });
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes?.find((entry) => entry.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

/** Whether `ancestor` is `span`'s parent, or its parent's, and so on, within `spans`. */
function descends(span: OtlpSpan, ancestor: OtlpSpan, spans: OtlpSpan[]): boolean {
  for (let parent = spans.find((s) => s.spanId === span.parentSpanId); parent; parent = spans.find((s) => s.spanId === parent!.parentSpanId)) {
    if (parent.spanId === ancestor.spanId) return true;
  }
  return false;
}

async function until<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!onPostgres)('OpenTelemetry traces exported over OTLP', () => {
  // A database of its own: the server's delivery worker claims every due delivery.
  let database: { url: string; drop(): Promise<void> };
  let db: Database;
  let server: ServerProcess | undefined;
  let collector: Awaited<ReturnType<typeof startReceiver>>;
  let hooks: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    database = await createTemporaryDatabase(inject('databaseUrl'), 'connect_tracing');
    db = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
    await db.withSession((session) => migrate(session));
    collector = await startReceiver();
    hooks = await startReceiver();
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await collector.close();
    await hooks.close();
    await db.close();
    await database.drop();
  });

  it('one trace per request continuing its traceparent: HTTP server span, REST handler or GraphQL operation, SQL, the attempts of the deliveries it queued', async () => {
    const host = `tracing-${randomBytes(4).toString('hex')}.test`;
    const workspace = await createWorkspace(db.prisma, { hostname: host, name: 'Traced' });
    const { apiKey } = await createChannel(db.prisma, { workspaceId: workspace.id, name: 'Traced channel', type: 'whatsapp' });
    // A token in the endpoint's query, as some receivers take one: never in a span.
    await createWebhook(db.prisma, { workspaceId: workspace.id, url: `${hooks.url}?token=query-secret-7f3a`, events: ['message.created'] }, testSealer);
    const mail = await emailWorkspace(db.prisma, { smtpUrl: 'smtp://127.0.0.1:9' });
    const smtpPort = await freePort();

    server = startServer({
      DATABASE_URL: database.url,
      SEED_DEMO: '0',
      DELIVERY_WORKER: '1',
      DELIVERY_POLL_MS: '50',
      SMTP_INBOUND_PORT: String(smtpPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url.replace(/\/hook$/, ''),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Spans leave the process a tenth of a second after they end.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const base = await server.listening;
    const auth = { authorization: `Bearer ${apiKey}` };
    const exported = () => spansOf(collector.received.filter((request) => request.headers['content-type']?.includes('json')).map((request) => request.body));

    // REST, with the caller's trace.
    const restTrace = randomBytes(16).toString('hex');
    const restParent = randomBytes(8).toString('hex');
    const listed = await requestServer(base, host, 'GET', '/api/connect/contacts', { ...auth, traceparent: `00-${restTrace}-${restParent}-01`, 'x-request-id': 'traced-rest-1' });
    expect(listed.status).toBe(200);
    const rest = await until('the REST request’s spans', () => {
      const spans = exported().filter((span) => span.traceId === restTrace);
      const handler = spans.find((span) => span.name === 'GET /api/connect/contacts');
      return handler && spans.some((span) => span.scope.includes('instrumentation-pg') && descends(span, handler, spans)) ? spans : undefined;
    });
    const httpSpan = rest.find((span) => span.kind === SPAN_KIND_SERVER && span.scope.includes('instrumentation-http'))!;
    expect(httpSpan).toBeDefined();
    expect(httpSpan.parentSpanId).toBe(restParent);
    expect(attribute(httpSpan, 'http.response.status_code') ?? attribute(httpSpan, 'http.status_code')).toBe(200);
    const handler = rest.find((span) => span.name === 'GET /api/connect/contacts')!;
    expect(handler.parentSpanId).toBe(httpSpan.spanId);
    expect(attribute(handler, 'http.route')).toBe('/api/connect/contacts');
    const sql = rest.filter((span) => span.scope.includes('instrumentation-pg') && span.name !== 'pg-pool.connect' && span.name !== 'pg.connect');
    expect(sql.length).toBeGreaterThan(0);
    for (const statement of sql) {
      expect(descends(statement, httpSpan, rest), statement.name).toBe(true);
      expect(attribute(statement, 'db.system') ?? attribute(statement, 'db.system.name')).toBe('postgresql');
    }
    // Statements, never their parameters' values: the credential looked up is not in any span.
    expect(JSON.stringify(rest)).not.toContain(apiKey);

    // GraphQL: the operation's span between the HTTP span and the statements.
    const graphqlTrace = randomBytes(16).toString('hex');
    const answered = await requestServer(base, host, 'POST', '/graphql', { ...auth, traceparent: `00-${graphqlTrace}-${randomBytes(8).toString('hex')}-01` }, { query: 'query TracedContacts { contacts(first: 5) { edges { node { id } } } }' });
    expect(answered.status).toBe(200);
    const graphql = await until('the GraphQL request’s spans', () => {
      const spans = exported().filter((span) => span.traceId === graphqlTrace);
      const operation = spans.find((span) => span.name === 'query.TracedContacts');
      return operation && spans.some((span) => span.scope.includes('instrumentation-pg') && descends(span, operation, spans)) ? spans : undefined;
    });
    const operation = graphql.find((span) => span.name === 'query.TracedContacts')!;
    const graphqlHttp = graphql.find((span) => span.kind === SPAN_KIND_SERVER)!;
    expect(descends(operation, graphqlHttp, graphql)).toBe(true);
    expect(attribute(operation, 'graphql.execute.operationName')).toBe('TracedContacts');

    // A send: its request's trace holds the attempts of the deliveries it queued (the message to
    // its channel, the event to the webhook endpoint), each with its own statements beneath it.
    const sendTrace = randomBytes(16).toString('hex');
    const sent = await requestServer(base, host, 'POST', '/api/connect/messages', { ...auth, traceparent: `00-${sendTrace}-${randomBytes(8).toString('hex')}-01` }, { to: { phone: '+31612340101' }, message: 'traced hello' });
    expect(sent.status).toBe(202);
    await until('the event delivered to the endpoint', () => (hooks.received.length > 0 ? true : undefined));
    const send = await until('the delivery attempts in the send’s trace', () => {
      const spans = exported().filter((span) => span.traceId === sendTrace);
      const attempts = spans.filter((span) => span.name === 'delivery attempt');
      const withSql = (kind: string) => attempts.some((attempt) => attribute(attempt, 'delivery.kind') === kind && spans.some((other) => other.scope.includes('instrumentation-pg') && descends(other, attempt, spans)));
      return withSql('event') && withSql('message') ? spans : undefined;
    });
    const sendHttp = send.find((span) => span.kind === SPAN_KIND_SERVER)!;
    const sendHandler = send.find((span) => span.name === 'POST /api/connect/messages')!;
    expect(sendHandler.parentSpanId).toBe(sendHttp.spanId);
    for (const attempt of send.filter((span) => span.name === 'delivery attempt')) {
      // Beneath the handler that queued it, in the request's trace.
      expect(descends(attempt, sendHandler, send)).toBe(true);
      expect(attribute(attempt, 'delivery.attempt')).toBeGreaterThanOrEqual(1);
    }
    // The event's request to its endpoint: a client span beneath its attempt, the query left out.
    const eventAttempt = send.find((span) => span.name === 'delivery attempt' && attribute(span, 'delivery.kind') === 'event')!;
    const outbound = await until('the endpoint request’s client span', () =>
      exported().find((span) => span.traceId === sendTrace && span.kind === SPAN_KIND_CLIENT && span.scope.includes('instrumentation-undici') && descends(span, eventAttempt, exported())),
    );
    expect(attribute(outbound, 'url.full')).toBe(`${hooks.url}?REDACTED`);
    expect(attribute(outbound, 'http.response.status_code')).toBe(200);
    // The endpoint received the span's traceparent.
    expect(hooks.received.at(-1)!.headers.traceparent).toMatch(new RegExp(`^00-${sendTrace}-${outbound.spanId}-0[01]$`));
    expect(JSON.stringify(exported())).not.toContain('query-secret-7f3a');

    // An email taken by the SMTP listener: a trace of its own, its statements and the attempt that reads it beneath.
    await waitFor(server, new RegExp(`inbound SMTP listening on 127\\.0\\.0\\.1:${smtpPort}`));
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'ada@example.com', to: mail.settings.inboundAddress, subject: 'traced mail', text: 'hello by mail' });
    transport.close();
    const smtp = await until('the mail’s trace', () => {
      const spans = exported();
      const received = spans.find((span) => span.name === 'smtp mail');
      if (!received) return undefined;
      const trace = spans.filter((span) => span.traceId === received.traceId);
      const attempt = trace.find((span) => span.name === 'delivery attempt' && attribute(span, 'delivery.kind') === 'inbound');
      return attempt && trace.some((span) => span.scope.includes('instrumentation-pg') && descends(span, received, trace)) ? { received, attempt, trace } : undefined;
    });
    expect(smtp.received.parentSpanId ?? '').toBe('');
    expect(attribute(smtp.received, 'smtp.recipients')).toBe(1);
    expect(descends(smtp.attempt, smtp.received, smtp.trace)).toBe(true);

    // The request's log lines carry its trace id.
    const lines = server.output().split('\n').filter((line) => line.includes('"requestId":"traced-rest-1"'));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ traceId: restTrace });

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // A server process started and several exports waited for, on a busy machine.
  }, 120_000);
});
