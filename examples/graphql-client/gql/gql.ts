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
    "\n  query ExampleViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n  }\n": typeof types.ExampleViewerDocument,
    "\n  query ExampleContacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { node { id name email phoneNumber createdAt } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.ExampleContactsDocument,
    "\n  mutation ExampleSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId contactId body status createdAt }\n      userErrors { field message code }\n    }\n  }\n": typeof types.ExampleSendMessageDocument,
    "\n  subscription ExampleMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id conversationId body placeholder direction createdAt\n      sender { type name }\n    }\n  }\n": typeof types.ExampleMessageAddedDocument,
};
const documents: Documents = {
    "\n  query ExampleViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n  }\n": types.ExampleViewerDocument,
    "\n  query ExampleContacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { node { id name email phoneNumber createdAt } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.ExampleContactsDocument,
    "\n  mutation ExampleSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId contactId body status createdAt }\n      userErrors { field message code }\n    }\n  }\n": types.ExampleSendMessageDocument,
    "\n  subscription ExampleMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id conversationId body placeholder direction createdAt\n      sender { type name }\n    }\n  }\n": types.ExampleMessageAddedDocument,
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
export function graphql(source: "\n  query ExampleViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n  }\n"): (typeof documents)["\n  query ExampleViewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ExampleContacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { node { id name email phoneNumber createdAt } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query ExampleContacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { node { id name email phoneNumber createdAt } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ExampleSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId contactId body status createdAt }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation ExampleSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId contactId body status createdAt }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ExampleMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id conversationId body placeholder direction createdAt\n      sender { type name }\n    }\n  }\n"): (typeof documents)["\n  subscription ExampleMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id conversationId body placeholder direction createdAt\n      sender { type name }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;