/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment InboxMessage on Message {\n    id conversationId direction body placeholder status failureReason createdAt\n    sender { type id name }\n  }\n": typeof types.InboxMessageFragmentDoc,
    "\n  fragment InboxConversation on Conversation {\n    id status unreadCount labels lastMessageAt lastReadAt\n    contact { id name email phoneNumber }\n    assignee { id name email }\n    lastMessage { ...InboxMessage }\n  }\n": typeof types.InboxConversationFragmentDoc,
    "\n  query WebInboxConversations($first: Int, $after: String, $unread: Boolean, $assigneeId: ID, $unassigned: Boolean, $label: String, $search: String) {\n    conversations(first: $first, after: $after, unread: $unread, assigneeId: $assigneeId, unassigned: $unassigned, label: $label, search: $search, sort: last_message) {\n      edges { node { ...InboxConversation } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.WebInboxConversationsDocument,
    "\n  query WebInboxThread($conversationId: ID!, $first: Int!, $after: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after) {\n      edges { node { ...InboxMessage } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.WebInboxThreadDocument,
    "\n  mutation WebInboxSendReply($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { ...InboxMessage }\n      userErrors { field message }\n    }\n  }\n": typeof types.WebInboxSendReplyDocument,
    "\n  mutation WebInboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n": typeof types.WebInboxAssignDocument,
    "\n  mutation WebInboxMarkRead($id: ID!) {\n    markConversationRead(id: $id) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n": typeof types.WebInboxMarkReadDocument,
    "\n  subscription WebInboxConversationUpdated {\n    conversationUpdated { ...InboxConversation }\n  }\n": typeof types.WebInboxConversationUpdatedDocument,
    "\n  subscription WebInboxMessageAdded($conversationId: ID!) {\n    messageAdded(conversationId: $conversationId) { ...InboxMessage }\n  }\n": typeof types.WebInboxMessageAddedDocument,
    "\n  subscription WebInboxMessageUpdated($conversationId: ID!) {\n    messageUpdated(conversationId: $conversationId) { ...InboxMessage }\n  }\n": typeof types.WebInboxMessageUpdatedDocument,
};
const documents: Documents = {
    "\n  fragment InboxMessage on Message {\n    id conversationId direction body placeholder status failureReason createdAt\n    sender { type id name }\n  }\n": types.InboxMessageFragmentDoc,
    "\n  fragment InboxConversation on Conversation {\n    id status unreadCount labels lastMessageAt lastReadAt\n    contact { id name email phoneNumber }\n    assignee { id name email }\n    lastMessage { ...InboxMessage }\n  }\n": types.InboxConversationFragmentDoc,
    "\n  query WebInboxConversations($first: Int, $after: String, $unread: Boolean, $assigneeId: ID, $unassigned: Boolean, $label: String, $search: String) {\n    conversations(first: $first, after: $after, unread: $unread, assigneeId: $assigneeId, unassigned: $unassigned, label: $label, search: $search, sort: last_message) {\n      edges { node { ...InboxConversation } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.WebInboxConversationsDocument,
    "\n  query WebInboxThread($conversationId: ID!, $first: Int!, $after: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after) {\n      edges { node { ...InboxMessage } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.WebInboxThreadDocument,
    "\n  mutation WebInboxSendReply($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { ...InboxMessage }\n      userErrors { field message }\n    }\n  }\n": types.WebInboxSendReplyDocument,
    "\n  mutation WebInboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n": types.WebInboxAssignDocument,
    "\n  mutation WebInboxMarkRead($id: ID!) {\n    markConversationRead(id: $id) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n": types.WebInboxMarkReadDocument,
    "\n  subscription WebInboxConversationUpdated {\n    conversationUpdated { ...InboxConversation }\n  }\n": types.WebInboxConversationUpdatedDocument,
    "\n  subscription WebInboxMessageAdded($conversationId: ID!) {\n    messageAdded(conversationId: $conversationId) { ...InboxMessage }\n  }\n": types.WebInboxMessageAddedDocument,
    "\n  subscription WebInboxMessageUpdated($conversationId: ID!) {\n    messageUpdated(conversationId: $conversationId) { ...InboxMessage }\n  }\n": types.WebInboxMessageUpdatedDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InboxMessage on Message {\n    id conversationId direction body placeholder status failureReason createdAt\n    sender { type id name }\n  }\n"): (typeof documents)["\n  fragment InboxMessage on Message {\n    id conversationId direction body placeholder status failureReason createdAt\n    sender { type id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment InboxConversation on Conversation {\n    id status unreadCount labels lastMessageAt lastReadAt\n    contact { id name email phoneNumber }\n    assignee { id name email }\n    lastMessage { ...InboxMessage }\n  }\n"): (typeof documents)["\n  fragment InboxConversation on Conversation {\n    id status unreadCount labels lastMessageAt lastReadAt\n    contact { id name email phoneNumber }\n    assignee { id name email }\n    lastMessage { ...InboxMessage }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebInboxConversations($first: Int, $after: String, $unread: Boolean, $assigneeId: ID, $unassigned: Boolean, $label: String, $search: String) {\n    conversations(first: $first, after: $after, unread: $unread, assigneeId: $assigneeId, unassigned: $unassigned, label: $label, search: $search, sort: last_message) {\n      edges { node { ...InboxConversation } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query WebInboxConversations($first: Int, $after: String, $unread: Boolean, $assigneeId: ID, $unassigned: Boolean, $label: String, $search: String) {\n    conversations(first: $first, after: $after, unread: $unread, assigneeId: $assigneeId, unassigned: $unassigned, label: $label, search: $search, sort: last_message) {\n      edges { node { ...InboxConversation } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query WebInboxThread($conversationId: ID!, $first: Int!, $after: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after) {\n      edges { node { ...InboxMessage } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query WebInboxThread($conversationId: ID!, $first: Int!, $after: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after) {\n      edges { node { ...InboxMessage } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebInboxSendReply($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { ...InboxMessage }\n      userErrors { field message }\n    }\n  }\n"): (typeof documents)["\n  mutation WebInboxSendReply($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { ...InboxMessage }\n      userErrors { field message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebInboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n"): (typeof documents)["\n  mutation WebInboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation WebInboxMarkRead($id: ID!) {\n    markConversationRead(id: $id) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n"): (typeof documents)["\n  mutation WebInboxMarkRead($id: ID!) {\n    markConversationRead(id: $id) {\n      conversation { ...InboxConversation }\n      userErrors { field message }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WebInboxConversationUpdated {\n    conversationUpdated { ...InboxConversation }\n  }\n"): (typeof documents)["\n  subscription WebInboxConversationUpdated {\n    conversationUpdated { ...InboxConversation }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WebInboxMessageAdded($conversationId: ID!) {\n    messageAdded(conversationId: $conversationId) { ...InboxMessage }\n  }\n"): (typeof documents)["\n  subscription WebInboxMessageAdded($conversationId: ID!) {\n    messageAdded(conversationId: $conversationId) { ...InboxMessage }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WebInboxMessageUpdated($conversationId: ID!) {\n    messageUpdated(conversationId: $conversationId) { ...InboxMessage }\n  }\n"): (typeof documents)["\n  subscription WebInboxMessageUpdated($conversationId: ID!) {\n    messageUpdated(conversationId: $conversationId) { ...InboxMessage }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;