import { graphql } from './gql/index.js';

// The page's operations. `npm run codegen` compiles each into a typed document in ./gql whose
// text is replaced by its id (`sha256:…`); the texts go to gql/persisted-documents.json, which
// the backend registers with the gateway (the deploy step), so the page sends ids only.

export const ViewerQuery = graphql(`
  query InboxViewer {
    viewer {
      workspace { id name }
      channel { id name type }
    }
  }
`);

export const ConversationsQuery = graphql(`
  query InboxConversations($first: Int) {
    conversations(first: $first) {
      edges {
        node {
          id status lastMessageAt
          contact { id name email phoneNumber }
        }
      }
    }
  }
`);

export const ContactsQuery = graphql(`
  query InboxContacts($first: Int, $search: String) {
    contacts(first: $first, search: $search) {
      edges { node { id name email phoneNumber } }
    }
  }
`);

export const MessagesQuery = graphql(`
  query InboxMessages($conversationId: ID!, $first: Int) {
    messages(conversationId: $conversationId, first: $first) {
      edges {
        node {
          id conversationId contactId body placeholder direction status createdAt
          sender { type id name }
        }
      }
    }
  }
`);

export const SendMessageMutation = graphql(`
  mutation InboxSendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id conversationId contactId body placeholder direction status createdAt
        sender { type id name }
      }
      userErrors { field message code }
    }
  }
`);

export const MessageAddedSubscription = graphql(`
  subscription InboxMessageAdded {
    messageAdded {
      id conversationId contactId body placeholder direction status createdAt
      sender { type id name }
      contact { id name email phoneNumber }
    }
  }
`);
