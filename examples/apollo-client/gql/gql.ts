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
    "\n  query ApolloViewer {\n    viewer {\n      workspace { id name }\n      channel { id name }\n    }\n  }\n": typeof types.ApolloViewerDocument,
    "\n  query ApolloThread($conversationId: ID!, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body createdAt direction } }\n      pageInfo { hasPreviousPage startCursor }\n    }\n  }\n": typeof types.ApolloThreadDocument,
    "\n  mutation ApolloSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId body status }\n      userErrors { field message code }\n    }\n  }\n": typeof types.ApolloSendMessageDocument,
    "\n  subscription ApolloMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id conversationId body }\n  }\n": typeof types.ApolloMessageAddedDocument,
};
const documents: Documents = {
    "\n  query ApolloViewer {\n    viewer {\n      workspace { id name }\n      channel { id name }\n    }\n  }\n": types.ApolloViewerDocument,
    "\n  query ApolloThread($conversationId: ID!, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body createdAt direction } }\n      pageInfo { hasPreviousPage startCursor }\n    }\n  }\n": types.ApolloThreadDocument,
    "\n  mutation ApolloSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId body status }\n      userErrors { field message code }\n    }\n  }\n": types.ApolloSendMessageDocument,
    "\n  subscription ApolloMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id conversationId body }\n  }\n": types.ApolloMessageAddedDocument,
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
export function graphql(source: "\n  query ApolloViewer {\n    viewer {\n      workspace { id name }\n      channel { id name }\n    }\n  }\n"): (typeof documents)["\n  query ApolloViewer {\n    viewer {\n      workspace { id name }\n      channel { id name }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApolloThread($conversationId: ID!, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body createdAt direction } }\n      pageInfo { hasPreviousPage startCursor }\n    }\n  }\n"): (typeof documents)["\n  query ApolloThread($conversationId: ID!, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body createdAt direction } }\n      pageInfo { hasPreviousPage startCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApolloSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId body status }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation ApolloSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id conversationId body status }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ApolloMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id conversationId body }\n  }\n"): (typeof documents)["\n  subscription ApolloMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id conversationId body }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;