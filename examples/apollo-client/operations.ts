import { graphql } from './gql/index.js';

// The app's operations: `npm run codegen` compiles each into a typed document in ./gql and writes
// its text into ./gql/persisted-documents.json, the manifest the deploy step registers. The
// codegen target adds `__typename` where Apollo's cache adds it and orders each document as the
// manifest prints it, so that the hash PersistedQueryLink computes names a registered document.

export const ViewerQuery = graphql(`
  query ApolloViewer {
    viewer {
      workspace { id name }
      channel { id name }
    }
  }
`);

export const ThreadQuery = graphql(`
  query ApolloThread($conversationId: ID!, $last: Int, $before: String) {
    messages(conversationId: $conversationId, last: $last, before: $before) {
      edges { cursor node { id body createdAt direction } }
      pageInfo { hasPreviousPage startCursor }
    }
  }
`);

export const SendMessageMutation = graphql(`
  mutation ApolloSendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message { id conversationId body status }
      userErrors { field message code }
    }
  }
`);

export const MessageAddedSubscription = graphql(`
  subscription ApolloMessageAdded($conversationId: ID) {
    messageAdded(conversationId: $conversationId) { id conversationId body }
  }
`);
