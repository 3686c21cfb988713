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
    "\n  query InboxViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type }\n    }\n  }\n": typeof types.InboxViewerDocument,
    "\n  query InboxConversations($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id status lastMessageAt\n          contact { id name email phoneNumber }\n        }\n      }\n    }\n  }\n": typeof types.InboxConversationsDocument,
    "\n  query InboxContacts($first: Int, $search: String) {\n    contacts(first: $first, search: $search) {\n      edges { node { id name email phoneNumber } }\n    }\n  }\n": typeof types.InboxContactsDocument,
    "\n  query InboxMessages($conversationId: ID!, $first: Int) {\n    messages(conversationId: $conversationId, first: $first) {\n      edges {\n        node {\n          id conversationId contactId body placeholder direction status createdAt\n          sender { type id name }\n        }\n      }\n    }\n  }\n": typeof types.InboxMessagesDocument,
    "\n  mutation InboxSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id conversationId contactId body placeholder direction status createdAt\n        sender { type id name }\n      }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxSendMessageDocument,
    "\n  subscription InboxMessageAdded {\n    messageAdded {\n      id conversationId contactId body placeholder direction status createdAt\n      sender { type id name }\n      contact { id name email phoneNumber }\n    }\n  }\n": typeof types.InboxMessageAddedDocument,
};
const documents: Documents = {
    "\n  query InboxViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type }\n    }\n  }\n": types.InboxViewerDocument,
    "\n  query InboxConversations($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id status lastMessageAt\n          contact { id name email phoneNumber }\n        }\n      }\n    }\n  }\n": types.InboxConversationsDocument,
    "\n  query InboxContacts($first: Int, $search: String) {\n    contacts(first: $first, search: $search) {\n      edges { node { id name email phoneNumber } }\n    }\n  }\n": types.InboxContactsDocument,
    "\n  query InboxMessages($conversationId: ID!, $first: Int) {\n    messages(conversationId: $conversationId, first: $first) {\n      edges {\n        node {\n          id conversationId contactId body placeholder direction status createdAt\n          sender { type id name }\n        }\n      }\n    }\n  }\n": types.InboxMessagesDocument,
    "\n  mutation InboxSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id conversationId contactId body placeholder direction status createdAt\n        sender { type id name }\n      }\n      userErrors { field message code }\n    }\n  }\n": types.InboxSendMessageDocument,
    "\n  subscription InboxMessageAdded {\n    messageAdded {\n      id conversationId contactId body placeholder direction status createdAt\n      sender { type id name }\n      contact { id name email phoneNumber }\n    }\n  }\n": types.InboxMessageAddedDocument,
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
export function graphql(source: "\n  query InboxViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type }\n    }\n  }\n"): (typeof documents)["\n  query InboxViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxConversations($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id status lastMessageAt\n          contact { id name email phoneNumber }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query InboxConversations($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id status lastMessageAt\n          contact { id name email phoneNumber }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxContacts($first: Int, $search: String) {\n    contacts(first: $first, search: $search) {\n      edges { node { id name email phoneNumber } }\n    }\n  }\n"): (typeof documents)["\n  query InboxContacts($first: Int, $search: String) {\n    contacts(first: $first, search: $search) {\n      edges { node { id name email phoneNumber } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxMessages($conversationId: ID!, $first: Int) {\n    messages(conversationId: $conversationId, first: $first) {\n      edges {\n        node {\n          id conversationId contactId body placeholder direction status createdAt\n          sender { type id name }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query InboxMessages($conversationId: ID!, $first: Int) {\n    messages(conversationId: $conversationId, first: $first) {\n      edges {\n        node {\n          id conversationId contactId body placeholder direction status createdAt\n          sender { type id name }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id conversationId contactId body placeholder direction status createdAt\n        sender { type id name }\n      }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id conversationId contactId body placeholder direction status createdAt\n        sender { type id name }\n      }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription InboxMessageAdded {\n    messageAdded {\n      id conversationId contactId body placeholder direction status createdAt\n      sender { type id name }\n      contact { id name email phoneNumber }\n    }\n  }\n"): (typeof documents)["\n  subscription InboxMessageAdded {\n    messageAdded {\n      id conversationId contactId body placeholder direction status createdAt\n      sender { type id name }\n      contact { id name email phoneNumber }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;