import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
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
 */

/** The registered documents, as this layer reads them; the documents module supplies them (src/modules/documents/). */
export interface DocumentStore {
  /** The text of the workspace's document with id `hash` (lowercase hex SHA-256), or null when it has none. */
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
  message: "This workspace runs only its registered documents for this credential: send the document's id (documentId, or extensions.persistedQuery) instead of its text.",
  extensions: { code: 'PERSISTED_QUERY_ONLY' },
};

/** Neither a text nor an id: yoga's own answer to a request without a query. */
const NOTHING_SENT = {
  message: 'Must provide query string.',
  extensions: { code: 'BAD_REQUEST', http: { spec: true, status: 400, headers: { Allow: 'GET, POST' } } },
};

const error = (shape: { message: string; extensions: Record<string, unknown> }) => createGraphQLError(shape.message, { extensions: shape.extensions });

const DOCUMENT_ID = /^sha256:([0-9a-fA-F]{64})$/;

/**
 * The id of the registered document a request names (lowercase hex), or null when it names none.
 * A `documentId` that is not `sha256:<hex>` names a document no workspace has. On GET the
 * `documentId` is a query parameter (`url`), which yoga's parameters do not carry.
 */
export function persistedDocumentId(params: GraphQLParams & { documentId?: unknown }, url?: URL): string | null {
  const documentId = params.documentId ?? url?.searchParams.get('documentId') ?? null;
  if (documentId !== null) return typeof documentId === 'string' ? (DOCUMENT_ID.exec(documentId)?.[1]?.toLowerCase() ?? '') : '';
  const persisted = params.extensions?.['persistedQuery'];
  if (isRecord(persisted) && persisted['version'] === 1 && typeof persisted['sha256Hash'] === 'string') return persisted['sha256Hash'].toLowerCase();
  return null;
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
    if (!mayRunText(caller)) throw error(TEXT_REFUSED);
    return { ...params, query: params.query };
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
 * caller is on the request's state, checked here before the plugin runs.
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
    onParams(payload) {
      const caller = payload.context.state?.caller;
      if (payload.params.query && caller && !mayRunText(caller)) throw error(TEXT_REFUSED);
      return persisted.onParams!(payload as never);
    },
  };
}
