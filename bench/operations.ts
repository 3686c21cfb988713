/**
 * The benchmarked operations: what each request looks like, how its answer is
 * judged, and its targets. The same requests go to the gateway and to the floor.
 */
import { createHash } from 'node:crypto';
import { signBody } from '../src/providers/whatsapp/inbound.js';
import { SEARCH_TERMS } from './seed.js';

/** GraphQL documents the bench sends; the floor recognises them by operation name. */
export const DOCUMENTS = {
  BenchUpdateContact: `mutation BenchUpdateContact($id: ID!, $input: UpdateContactInput!) {
  updateContact(id: $id, input: $input) { contact { id name email phoneNumber updatedAt } userErrors { field message code } }
}`,
  BenchSendMessage: `mutation BenchSendMessage($input: SendMessageInput!) {
  sendMessage(input: $input) { message { id conversationId contactId status body createdAt } userErrors { field message code } }
}`,
  BenchContacts: `query BenchContacts($first: Int, $after: String) {
  contacts(first: $first, after: $after) {
    edges { cursor node { id name email phoneNumber isGroup createdAt updatedAt } }
    pageInfo { hasNextPage endCursor }
  }
}`,
  BenchConversations: `query BenchConversations($first: Int) {
  conversations(first: $first) {
    edges { node { id status lastMessageAt messages(first: 5) { edges { node { id body createdAt contact { id name } } } } } }
    pageInfo { hasNextPage endCursor }
  }
}`,
  BenchInbox: `query BenchInbox($first: Int) {
  conversations(first: $first, sort: last_message) {
    edges { node {
      id status unreadCount lastReadAt labels
      assignee { id name email }
      contact { id name phoneNumber email }
      lastMessage { id type body status createdAt direction }
    } }
    pageInfo { hasNextPage endCursor }
  }
}`,
  /** The gateway's own page checks (bench/checks.ts): a conversation's messages from either end. */
  BenchConversationPage: `query BenchConversationPage($id: ID, $first: Int, $last: Int) {
  messages(conversationId: $id, first: $first, last: $last) {
    edges { cursor node { id body status sender { type name } createdAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`,
} as const;

export type DocumentName = keyof typeof DOCUMENTS;

/** The documents the bench registers for its workspace (trusted documents), by name, with their ids' hex. */
export const REGISTERED = Object.fromEntries(
  (['BenchContacts'] as const).map((name) => [name, createHash('sha256').update(DOCUMENTS[name]).digest('hex')]),
) as Record<'BenchContacts', string>;

/** What the operations need from the seeded data. */
export interface BenchContext {
  host: string;
  apiKey: string;
  /**
   * A session token (`cst_`) its backend minted with `apiKey` for a workspace user, over the same
   * channel, with every scope; null when the measured version has no sessions.
   */
  sessionToken: string | null;
  /** Live contacts that PATCH and updateContact cycle over. */
  patchContacts: string[];
  /** Contacts with an open conversation on the channel, that sends cycle over. */
  sendContacts: string[];
  /** A cursor deep in the contact list (see `deepRows`). */
  deepCursor: string;
  /** How many contacts come before `deepCursor`. */
  deepRows: number;
  /** The same deep in the channel's messages. */
  deepMessagesCursor: string;
  deepMessagesRows: number;
  /** The channel's longest conversation and how many messages it holds. */
  longConversation: { id: string; messages: number };
  /** Distinguishes this run's names and idempotency keys from any other's. */
  run: string;
  /** The bench's whatsapp_cloud channel: where signed webhooks go, and who writes them. */
  whatsapp: {
    channelId: string;
    apiKey: string;
    appSecret: string;
    phoneNumberId: string;
    /** Phone numbers of seeded contacts with an open conversation, that inbound messages come from. */
    phones: string[];
  };
}

export interface BenchRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Operation {
  id: string;
  title: string;
  transport: 'rest' | 'graphql';
  write: boolean;
  /** The least throughput against the floor that meets the target, when there is one. */
  floorTarget?: number;
  /** The most statements the gateway may send the database for one request (authentication included), when judged. */
  maxStatements?: number;
  /** Whether its latency is judged against the floor's: p99 at most 1.5 times, p50 at most 1.2 times. */
  tail?: boolean;
  /**
   * Inbound acceptance: measured against a gateway whose delivery worker is off, as the floor
   * processes nothing, and the stored events are discarded after each window.
   */
  inbound?: boolean;
  /** Sent with the session token: left out when the measured version has none. */
  session?: boolean;
  /**
   * The operation it must keep up with, measured in adjacent windows, and how closely: for a
   * GraphQL operation the REST one, or the same query sent as text; for a request with a session
   * token the same request with the channel key. `label` names the comparison in the report.
   */
  rest?: { id: string; target: number; label: string };
  /** The n-th request (n counts every request of the run, so writes never repeat). */
  request(ctx: BenchContext, n: number): BenchRequest;
  /** Why an answer that arrived with a 2xx status is still a failure, if it is. */
  fault?(body: string): string | null;
}

const headers = (ctx: BenchContext, json: boolean, token = ctx.apiKey): Record<string, string> => ({
  host: ctx.host,
  authorization: `Bearer ${token}`,
  accept: 'application/json',
  ...(json ? { 'content-type': 'application/json' } : {}),
});

const pick = <T>(list: T[], n: number): T => list[n % list.length]!;

const TERMS = [SEARCH_TERMS.rare, SEARCH_TERMS.medium, SEARCH_TERMS.common];

export const graphql = (ctx: BenchContext, operationName: DocumentName, variables: Record<string, unknown>): BenchRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: headers(ctx, true),
  body: JSON.stringify({ query: DOCUMENTS[operationName], operationName, variables }),
});

/** A registered document named by its id (`documentId`), with the operation name the floor knows it by. */
const graphqlById = (ctx: BenchContext, operationName: keyof typeof REGISTERED, variables: Record<string, unknown>): BenchRequest => ({
  method: 'POST',
  path: '/graphql',
  headers: headers(ctx, true),
  body: JSON.stringify({ documentId: `sha256:${REGISTERED[operationName]}`, operationName, variables }),
});

/** A GraphQL answer is a failure when it carries errors, or a mutation's userErrors. */
function graphqlFault(body: string): string | null {
  if (body.includes('"errors"')) return `errors: ${body.slice(0, 300)}`;
  if (body.includes('"userErrors":[{')) return `userErrors: ${body.slice(0, 300)}`;
  if (!body.startsWith('{"data":{')) return `not a data answer: ${body.slice(0, 300)}`;
  return null;
}

/**
 * The n-th new contact's phone: a Berlin number (+49 30 and 9 digits of n), which no seeded contact
 * has (theirs are mobile numbers) and no other request of the run (n counts them all).
 */
const benchPhone = (n: number) => `+4930${String(n % 1_000_000_000).padStart(9, '0')}`;

const text = (n: number) => `Bench message ${n}: your parcel with the charger is on its way (ref bench${n % 1000}).`;

/** The text of the n-th inbound message: the run and n, so that its arrival can be matched. */
export const inboundText = (ctx: BenchContext, n: number) => `Bench inbound ${ctx.run} ${n}: is my parcel with the charger on its way?`;

/**
 * The n-th WhatsApp webhook, as Meta sends it: one text message from a seeded contact's phone,
 * with its own message id, signed with the channel's app secret (X-Hub-Signature-256).
 */
export function inboundWebhook(ctx: BenchContext, n: number): BenchRequest {
  const wa = ctx.whatsapp;
  const from = pick(wa.phones, n).replace(/^\+/, '');
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA0',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: wa.phoneNumberId },
              contacts: [{ profile: { name: `Bench ${from.slice(-4)}` }, wa_id: from }],
              messages: [{ from, id: `wamid.bench.${ctx.run}.${n}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: inboundText(ctx, n) } }],
            },
          },
        ],
      },
    ],
  });
  return {
    method: 'POST',
    path: `/webhooks/whatsapp/${wa.channelId}`,
    headers: { host: ctx.host, 'content-type': 'application/json', 'x-hub-signature-256': signBody(body, wa.appSecret) },
    body,
  };
}

export const OPERATIONS: Operation[] = [
  {
    id: 'rest.patch',
    title: 'PATCH /contacts/{id} (name)',
    transport: 'rest',
    write: true,
    floorTarget: 1,
    tail: true,
    request: (ctx, n) => ({
      method: 'PATCH',
      path: `/api/connect/contacts/${pick(ctx.patchContacts, n)}`,
      headers: headers(ctx, true),
      body: JSON.stringify({ name: `Bench ${ctx.run}-${n}` }),
    }),
  },
  {
    id: 'rest.create',
    title: 'POST /contacts (name, email, phone)',
    transport: 'rest',
    write: true,
    tail: true,
    rest: { id: 'rest.patch', target: 0.5, label: 'create/PATCH' },
    // Every request a new contact: its own email and phone (run and n), held by no other.
    request: (ctx, n) => ({
      method: 'POST',
      path: '/api/connect/contacts',
      headers: headers(ctx, true),
      body: JSON.stringify({ name: `Bench ${ctx.run}-${n}`, email: `bench-${ctx.run}-${n}@example.com`, phone: benchPhone(n) }),
    }),
  },
  {
    id: 'rest.send',
    title: 'POST /messages (text, Idempotency-Key)',
    transport: 'rest',
    write: true,
    floorTarget: 1,
    tail: true,
    request: (ctx, n) => ({
      method: 'POST',
      path: '/api/connect/messages',
      headers: { ...headers(ctx, true), 'idempotency-key': `bench-${ctx.run}-${n}` },
      body: JSON.stringify({ to: pick(ctx.sendContacts, n), message: text(n) }),
    }),
  },
  {
    id: 'rest.list',
    title: 'GET /contacts (first page)',
    transport: 'rest',
    write: false,
    floorTarget: 1,
    tail: true,
    request: (ctx) => ({ method: 'GET', path: '/api/connect/contacts?limit=25', headers: headers(ctx, false) }),
  },
  {
    id: 'rest.list.session',
    title: 'GET /contacts (first page), session token',
    transport: 'rest',
    write: false,
    session: true,
    rest: { id: 'rest.list', target: 0.95, label: 'session token / channel key' },
    request: (ctx) => ({ method: 'GET', path: '/api/connect/contacts?limit=25', headers: headers(ctx, false, ctx.sessionToken!) }),
  },
  {
    id: 'rest.inbox',
    title: 'GET /conversations?sort=last_message (the inbox page)',
    transport: 'rest',
    write: false,
    floorTarget: 0.8,
    tail: true,
    maxStatements: 3,
    request: (ctx) => ({ method: 'GET', path: '/api/connect/conversations?limit=25&sort=last_message', headers: headers(ctx, false) }),
  },
  {
    id: 'rest.deep',
    title: 'GET /contacts (deep cursor)',
    transport: 'rest',
    write: false,
    floorTarget: 1,
    request: (ctx) => ({ method: 'GET', path: `/api/connect/contacts?limit=25&cursor=${ctx.deepCursor}`, headers: headers(ctx, false) }),
  },
  {
    id: 'rest.search',
    title: 'GET /messages?search= (rare, medium, common)',
    transport: 'rest',
    write: false,
    floorTarget: 1,
    request: (ctx, n) => ({ method: 'GET', path: `/api/connect/messages?limit=25&search=${pick(TERMS, n)}`, headers: headers(ctx, false) }),
  },
  {
    id: 'wa.accept',
    title: 'POST /webhooks/whatsapp/{channelId} (signed)',
    transport: 'rest',
    write: false,
    inbound: true,
    floorTarget: 0.8,
    request: inboundWebhook,
    fault: (body) => (body === 'OK' ? null : `not accepted: ${body.slice(0, 300)}`),
  },
  {
    id: 'gql.updateContact',
    title: 'GraphQL updateContact (name)',
    transport: 'graphql',
    write: true,
    rest: { id: 'rest.patch', target: 0.95, label: 'GraphQL/REST' },
    tail: true,
    request: (ctx, n) => graphql(ctx, 'BenchUpdateContact', { id: pick(ctx.patchContacts, n), input: { name: `Bench ${ctx.run}-${n}` } }),
    fault: graphqlFault,
  },
  {
    id: 'gql.sendMessage',
    title: 'GraphQL sendMessage (idempotencyKey)',
    transport: 'graphql',
    write: true,
    rest: { id: 'rest.send', target: 0.95, label: 'GraphQL/REST' },
    request: (ctx, n) =>
      graphql(ctx, 'BenchSendMessage', { input: { to: { contactId: pick(ctx.sendContacts, n) }, message: text(n), idempotencyKey: `bench-${ctx.run}-${n}` } }),
    fault: graphqlFault,
  },
  {
    id: 'gql.contacts',
    title: 'GraphQL contacts(first: 25)',
    transport: 'graphql',
    write: false,
    rest: { id: 'rest.list', target: 0.95, label: 'GraphQL/REST' },
    request: (ctx) => graphql(ctx, 'BenchContacts', { first: 25 }),
    fault: graphqlFault,
  },
  {
    id: 'gql.contacts.byId',
    title: 'GraphQL contacts(first: 25), registered, by id',
    transport: 'graphql',
    write: false,
    rest: { id: 'gql.contacts', target: 1, label: 'by id / as text' },
    request: (ctx) => graphqlById(ctx, 'BenchContacts', { first: 25 }),
    fault: graphqlFault,
  },
  {
    id: 'gql.inbox',
    title: 'GraphQL conversations(first: 25, sort: last_message): the inbox page',
    transport: 'graphql',
    write: false,
    rest: { id: 'rest.inbox', target: 0.9, label: 'GraphQL/REST' },
    tail: true,
    maxStatements: 3,
    request: (ctx) => graphql(ctx, 'BenchInbox', { first: 25 }),
    fault: graphqlFault,
  },
  {
    id: 'gql.nested',
    title: 'GraphQL conversations → messages → contact',
    transport: 'graphql',
    write: false,
    request: (ctx) => graphql(ctx, 'BenchConversations', { first: 10 }),
    fault: graphqlFault,
  },
];

export function operationById(id: string): Operation {
  const op = OPERATIONS.find((o) => o.id === id);
  if (!op) throw new Error(`unknown operation ${id}; known: ${OPERATIONS.map((o) => o.id).join(', ')}`);
  return op;
}
