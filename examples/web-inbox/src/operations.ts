import { graphql } from './gql/index.js';

// The inbox's GraphQL documents. `npm run codegen` compiles each into a typed document in ./gql
// whose text is replaced by its id (`sha256:…`); the texts go to gql/persisted-documents.json,
// which the backend registers with the gateway at start (the deploy step), so the page sends ids only.

graphql(`
  fragment InboxMessage on Message {
    id conversationId direction body placeholder status failureReason createdAt
    sender { type id name }
  }
`);

graphql(`
  fragment InboxConversation on Conversation {
    id status unreadCount labels lastMessageAt lastReadAt
    contact { id name email phoneNumber }
    assignee { id name email }
    lastMessage { ...InboxMessage }
  }
`);

export const ConversationsQuery = graphql(`
  query WebInboxConversations($first: Int, $after: String, $unread: Boolean, $assigneeId: ID, $unassigned: Boolean, $label: String, $search: String) {
    conversations(first: $first, after: $after, unread: $unread, assigneeId: $assigneeId, unassigned: $unassigned, label: $label, search: $search, sort: last_message) {
      edges { node { ...InboxConversation } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

/** Messages are listed newest first: `first` opens on the newest, `after` goes back in time. */
export const ThreadQuery = graphql(`
  query WebInboxThread($conversationId: ID!, $first: Int!, $after: String) {
    messages(conversationId: $conversationId, first: $first, after: $after) {
      edges { node { ...InboxMessage } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

export const SendReplyMutation = graphql(`
  mutation WebInboxSendReply($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message { ...InboxMessage }
      userErrors { field message }
    }
  }
`);

export const AssignMutation = graphql(`
  mutation WebInboxAssign($id: ID!, $userId: ID) {
    assignConversation(id: $id, userId: $userId) {
      conversation { ...InboxConversation }
      userErrors { field message }
    }
  }
`);

export const MarkReadMutation = graphql(`
  mutation WebInboxMarkRead($id: ID!) {
    markConversationRead(id: $id) {
      conversation { ...InboxConversation }
      userErrors { field message }
    }
  }
`);

/** Every change of every conversation: a new message, a read, an assignment, labels. */
export const ConversationUpdatedSubscription = graphql(`
  subscription WebInboxConversationUpdated {
    conversationUpdated { ...InboxConversation }
  }
`);

export const MessageAddedSubscription = graphql(`
  subscription WebInboxMessageAdded($conversationId: ID!) {
    messageAdded(conversationId: $conversationId) { ...InboxMessage }
  }
`);

/** Delivery ticks: sent, delivered, read, failed, as the provider reports them. */
export const MessageUpdatedSubscription = graphql(`
  subscription WebInboxMessageUpdated($conversationId: ID!) {
    messageUpdated(conversationId: $conversationId) { ...InboxMessage }
  }
`);
