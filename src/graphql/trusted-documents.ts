import { createHash } from 'node:crypto';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { parse, print } from 'graphql';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import type { AuthContext } from '../context/types.js';
import type { ServerContext } from '../http/state.js';
import { isRecord } from '../lib/validation.js';

/*
 * Trusted documents (docs/graphql.md): a request may name a document its workspace registered instead
 * of sending the text — `{"documentId":"sha256:<hex>"}` (GraphQL over HTTP, persisted documents)
 * or `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"<hex>"}}}` (automatic persisted
 * queries) — and a workspace may let its session tokens run nothing else. The stored text is
 * handed to yoga unchanged, so yoga's parser and validation caches, keyed by the text, parse and
 * validate each document once per process, whichever way it is sent.
 *
 * Clients at their defaults (docs/graphql.md#trusted-documents): a document is also found by the
 * SHA-256 of its text as graphql-js print() prints it (Apollo Client's persisted-query link), an
 * id may carry the `sha256:` prefix in either form, and a text sent beside an id (Apollo's
 * WebSocket link sends both) runs, as the registered document, when it is that document after
 * print() — even for a caller restricted to registered documents.
 */

/**
 * The id a document also has: the SHA-256 of its text as graphql-js print() prints it, which is
 * what Apollo Client's persisted-query link hashes (docs/graphql.md#trusted-documents). Null for a
 * text that is not a document.
 */
export function printedHash(text: string): string | null {
  try {
    return createHash('sha256').update(print(parse(text, { noLocation: true })), 'utf8').digest('hex');
  } catch {
    return null;
  }
}

/** The registered documents, as this layer reads them; the documents module supplies them (src/modules/documents/). */
export interface DocumentStore {
  /**
   * The text of the workspace's document with id `hash` (lowercase hex SHA-256 of its text, or of
   * its text as print() prints it), or null when it has none.
   */
  get(workspaceId: string, hash: string): Promise<string | null>;
  /** How many documents are kept in memory. */
  readonly size: number;
}

/**
 * Whether the caller holds a credential a browser holds (a session token, docs/browser-apps.md): those a
 * workspace may restrict to its registered documents. Backend credentials (channel keys,
 * connection tokens) are never restricted.
 */
export function isBrowserCredential(caller: AuthContext): boolean {
  return caller.credential.kind === 'session';
}

/** Whether `caller` may send an operation's text rather than a registered document's id. */
export function mayRunText(caller: AuthContext): boolean {
  return !(caller.workspace.trustedDocumentsOnly && isBrowserCredential(caller));
}

/** The refusal of an id the workspace has not registered: the error persisted-query clients fall back on (they resend the text). */
const NOT_FOUND = { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } };

/** The refusal of a text from a caller restricted to registered documents: nothing runs. */
const TEXT_REFUSED = {
  message:
    'This workspace runs only its registered documents for this credential: ' +
    "send the document's id (documentId, or extensions.persistedQuery) instead of its text.",
  extensions: { code: 'PERSISTED_QUERY_ONLY' },
};

/** Neither a text nor an id: yoga's own answer to a request without a query. */
const NOTHING_SENT = {
  message: 'Must provide query string.',
  extensions: { code: 'BAD_REQUEST', http: { spec: true, status: 400, headers: { Allow: 'GET, POST' } } },
};

const error = (shape: { message: string; extensions: Record<string, unknown> }) => createGraphQLError(shape.message, { extensions: shape.extensions });

const DOCUMENT_ID = /^sha256:([0-9a-fA-F]{64})$/;
/** `extensions.persistedQuery.sha256Hash`: the hex, with or without the `sha256:` of a document id. */
const PERSISTED_HASH = /^(?:sha256:)?([0-9a-fA-F]{64})$/;

/**
 * The id of the registered document a request names (lowercase hex), or null when it names none.
 * A `documentId` that is not `sha256:<hex>` names a document no workspace has. On GET the
 * `documentId` is a query parameter (`url`), which yoga's parameters do not carry.
 */
export function persistedDocumentId(params: GraphQLParams & { documentId?: unknown }, url?: URL): string | null {
  const documentId = params.documentId ?? url?.searchParams.get('documentId') ?? null;
  if (documentId !== null) return typeof documentId === 'string' ? (DOCUMENT_ID.exec(documentId)?.[1]?.toLowerCase() ?? '') : '';
  const persisted = params.extensions?.['persistedQuery'];
  if (isRecord(persisted) && persisted['version'] === 1 && typeof persisted['sha256Hash'] === 'string') {
    return PERSISTED_HASH.exec(persisted['sha256Hash'])?.[1]?.toLowerCase() ?? '';
  }
  return null;
}

/**
 * For a request carrying both a text and an id: the registered document the id names, when the
 * text is that document (the same after print()); else null.
 */
async function registeredTextOf(documents: DocumentStore, caller: AuthContext, params: GraphQLParams, url?: URL): Promise<string | null> {
  const id = persistedDocumentId(params, url);
  if (!id || !params.query) return null;
  const registered = await documents.get(caller.workspace.id, id);
  if (registered === null) return null;
  if (registered === params.query) return registered;
  const printed = printedHash(params.query);
  return printed !== null && printed === printedHash(registered) ? registered : null;
}

/**
 * The operation's parameters with its text: those sent, when they carry a text the caller may
 * send (an id beside it is ignored, and nothing is registered); else the text of the registered
 * document they name. Throws the GraphQL error of the refusal (PERSISTED_QUERY_NOT_FOUND,
 * PERSISTED_QUERY_ONLY, or neither text nor id). The HTTP path does the same through yoga's
 * plugin; a transport outside yoga's request pipeline (a WebSocket's `subscribe`, whose id travels
 * in `extensions.persistedQuery` beside an empty `query`) calls this before parsing.
 */
export async function operationParams(documents: DocumentStore, caller: AuthContext, params: GraphQLParams): Promise<GraphQLParams & { query: string }> {
  if (params.query) {
    if (mayRunText(caller)) return { ...params, query: params.query };
    const registered = await registeredTextOf(documents, caller, params);
    if (registered === null) throw error(TEXT_REFUSED);
    return { query: registered, operationName: params.operationName, variables: params.variables, extensions: params.extensions };
  }
  const id = persistedDocumentId(params);
  if (id === null) throw error(NOTHING_SENT);
  const text = await documents.get(caller.workspace.id, id);
  if (text === null) throw error(NOT_FOUND);
  return { query: text, operationName: params.operationName, variables: params.variables, extensions: params.extensions };
}

/**
 * Trusted documents on yoga's HTTP pipeline (POST, GET and SSE), through yoga's persisted-operations
 * plugin: it finds the id in either form, hands the registered text on, and answers an unknown id.
 * Whether a text may run depends on the caller, which the plugin's own switch is not given: the
 * caller is on the request's state, checked here before the plugin runs. A restricted caller's
 * text beside the id of the registered document it is goes through the plugin as the id alone.
 */
export function trustedDocumentsPlugin(documents: DocumentStore): Plugin<Record<string, unknown>, ServerContext> {
  const persisted = usePersistedOperations<ServerContext & Record<string, unknown>>({
    allowArbitraryOperations: true,
    extractPersistedOperationId: (params, request) => persistedDocumentId(params, request.method === 'GET' ? new URL(request.url) : undefined),
    getPersistedOperation: (id, _request, context) => {
      const caller = context.state?.caller;
      return caller ? documents.get(caller.workspace.id, id) : null;
    },
    customErrors: { notFound: NOT_FOUND, keyNotFound: NOTHING_SENT },
  });
  return {
    ...(persisted as Plugin<Record<string, unknown>, ServerContext>),
    async onParams(payload) {
      const caller = payload.context.state?.caller;
      const { params, request } = payload;
      if (params.query && caller && !mayRunText(caller)) {
        const url = request.method === 'GET' ? new URL(request.url) : undefined;
        if ((await registeredTextOf(documents, caller, params, url)) === null) throw error(TEXT_REFUSED);
        return persisted.onParams!({ ...payload, params: { ...params, query: undefined } } as never);
      }
      return persisted.onParams!(payload as never);
    },
  };
}
