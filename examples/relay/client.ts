import { Environment, Network, RecordSource, Store, createOperationDescriptor, fetchQuery, getSingularSelector, type FetchFunction } from 'relay-runtime';
import ThreadQueryNode, { type ThreadQuery, type ThreadQuery$data } from './__generated__/ThreadQuery.graphql.js';
import ThreadMessagesPaginationQueryNode, { type ThreadMessagesPaginationQuery } from './__generated__/ThreadMessagesPaginationQuery.graphql.js';
import ThreadMessagesNode, { type Thread_messages$data } from './__generated__/Thread_messages.graphql.js';

// Relay on the Connect gateway: relay-runtime's Environment with a network layer that is one fetch
// function. The Relay compiler (`npm run relay`, relay.config.json) compiles ./Thread.ts into
// ./__generated__ and writes each operation's text into ./persisted-documents.json, which the deploy
// step registers with the gateway: the app sends each operation's id alone (`documentId`), so a
// workspace that runs only registered documents for its browser sessions runs these. The app
// imports the artifacts (no Babel plugin needed); a React app reads the same fragment with
// `usePaginationFragment` and `loadPrevious`.

export interface RelayConnectOptions {
  /** The gateway's base URL, whose host names the workspace: `https://connect.example.com`. */
  baseUrl: string;
  /** The credential: in a browser, a session token (`cst_…`) its backend minted. */
  token: () => string;
  /** Picks the channel when the credential has several. */
  channelId?: string;
  /** Headers every request carries besides the credential (a proxy's). */
  headers?: Record<string, string>;
}

/**
 * The network layer: an operation the compiler persisted goes as its id (`documentId`, GraphQL over
 * HTTP's persisted documents), any other as its text. Errors come back in the answer as Relay
 * expects them; an answer without data (401, a refused document) is thrown by Relay.
 */
export function fetchFunction(options: RelayConnectOptions): FetchFunction {
  return async (params, variables) => {
    const body = params.id ? { documentId: `sha256:${params.id}`, operationName: params.name, variables } : { query: params.text, operationName: params.name, variables };
    const response = await fetch(`${options.baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        ...options.headers,
        authorization: `Bearer ${options.token()}`,
        ...(options.channelId ? { 'x-channel-uuid': options.channelId } : {}),
      },
      body: JSON.stringify(body),
    });
    return response.json();
  };
}

export function createRelayEnvironment(options: RelayConnectOptions): Environment {
  return new Environment({ network: Network.create(fetchFunction(options)), store: new Store(new RecordSource()) });
}

export interface Thread {
  conversation: NonNullable<ThreadQuery$data['conversation']>;
  /** The messages loaded so far, oldest first, and whether older ones remain. */
  messages(): Thread_messages$data['messages'];
  /** Loads the `count` messages before the oldest one shown, through `node(id:)`; they join the start of `messages()`. */
  loadOlder(count?: number): Promise<void>;
  /** Lets Relay's store forget the thread. */
  dispose(): void;
}

/**
 * Opens a conversation's thread: the newest `count` messages in reading order
 * (`messages(order: asc, last: count)`), then older pages on demand, which Relay's connection
 * handler puts in front of the ones already loaded.
 */
export async function openThread(environment: Environment, conversationId: string, count = 20): Promise<Thread | null> {
  const variables = { id: conversationId, count, before: null };
  await fetchQuery<ThreadQuery>(environment, ThreadQueryNode, variables).toPromise();
  const operation = createOperationDescriptor(ThreadQueryNode, variables);
  // Held, so that the store keeps what the thread shows between its pages.
  const retained = environment.retain(operation);
  const conversation = (environment.lookup(operation.fragment).data as ThreadQuery$data).conversation;
  if (!conversation) {
    retained.dispose();
    return null;
  }
  const messages = () => (environment.lookup(getSingularSelector(ThreadMessagesNode, conversation)).data as Thread_messages$data).messages;
  return {
    conversation,
    messages,
    async loadOlder(size = count) {
      const page = messages();
      if (!page?.pageInfo.hasPreviousPage) return;
      await fetchQuery<ThreadMessagesPaginationQuery>(environment, ThreadMessagesPaginationQueryNode, { id: conversationId, count: size, before: page.pageInfo.startCursor ?? null }).toPromise();
    },
    dispose: () => retained.dispose(),
  };
}
