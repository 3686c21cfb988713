import type { Client } from 'graphql-sse';
import { GraphQLRequestError, execute, subscribe, type ConnectOptions, type Subscription } from './client.js';
import { graphql } from './gql/index.js';
import type { ExampleMessageAddedSubscription, SendMessageInput } from './gql/graphql.js';

// Each document is compiled by `npm run codegen` into a typed document in ./gql: the
// result and variable types below are inferred from what the document selects.

const ViewerQuery = graphql(`
  query ExampleViewer {
    viewer {
      workspace { id name }
      channel { id name type status }
    }
  }
`);

const ContactsQuery = graphql(`
  query ExampleContacts($first: Int, $after: String, $search: String) {
    contacts(first: $first, after: $after, search: $search) {
      edges { node { id name email phoneNumber createdAt } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

const SendMessageMutation = graphql(`
  mutation ExampleSendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message { id conversationId contactId body status createdAt }
      userErrors { field message code }
    }
  }
`);

const MessageAddedSubscriptionDocument = graphql(`
  subscription ExampleMessageAdded($conversationId: ID) {
    messageAdded(conversationId: $conversationId) {
      id conversationId body placeholder direction createdAt
      sender { type name }
    }
  }
`);

/** The workspace and channel the credential acts for. */
export async function getViewer(options: ConnectOptions) {
  const { viewer } = await execute(options, ViewerQuery);
  // A root field is null only beside an error for it, and `execute` throws on errors.
  if (!viewer) throw new GraphQLRequestError(200, []);
  return viewer;
}

/** One page of contacts; pass `endCursor` back as `after` for the next. */
export async function listContacts(options: ConnectOptions, page: { first?: number; after?: string; search?: string } = {}) {
  const { contacts } = await execute(options, ContactsQuery, page);
  // A connection is null only beside an error for it, and `execute` throws on errors.
  if (!contacts) throw new GraphQLRequestError(200, []);
  return { contacts: contacts.edges.map((edge) => edge.node), pageInfo: contacts.pageInfo };
}

/**
 * Sends a message. A refused input (no recipient, an empty text, an unknown template…) is
 * not thrown: it comes back as `userErrors`, each naming its input path, for a form to show
 * next to the field. Transport and authentication failures throw GraphQLRequestError.
 */
export async function sendMessage(options: ConnectOptions, input: SendMessageInput) {
  const { sendMessage: payload } = await execute(options, SendMessageMutation, { input });
  if (!payload) throw new GraphQLRequestError(200, []);
  if (payload.message) return { ok: true as const, message: payload.message };
  return { ok: false as const, userErrors: payload.userErrors };
}

export type AddedMessage = ExampleMessageAddedSubscription['messageAdded'];

/** New messages on the acting channel (of one conversation when given), as they are sent. */
export function onMessageAdded(client: Client<false>, conversationId?: string): Subscription<AddedMessage> {
  const subscription = subscribe(client, MessageAddedSubscriptionDocument, conversationId ? { conversationId } : {});
  return {
    connected: subscription.connected,
    dispose: () => subscription.dispose(),
    async *[Symbol.asyncIterator]() {
      for await (const event of subscription) yield event.messageAdded;
    },
  };
}
