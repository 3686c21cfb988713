/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type MessageDirection =
  | 'inbound'
  | 'outbound';

export type MessageStatus =
  | 'delivered'
  | 'failed'
  | 'queued'
  | 'read'
  | 'received'
  | 'sent';

export type MessageType =
  | 'template'
  | 'text';

/** A contact by id (groups included), or details matched by phone then email, or used to create one. */
export type RecipientInput = {
  contactId?: string | number | null | undefined;
  email?: string | null | undefined;
  name?: string | null | undefined;
  phone?: string | null | undefined;
};

/** Recipient resolution: to, then contact, then the legacy sender when neither is given. */
export type SendMessageInput = {
  /** The channel to send on: one the credential can act as. Needed, unless X-Channel-Uuid names one, by a credential of several channels. */
  channelId?: string | number | null | undefined;
  contact?: RecipientInput | null | undefined;
  /** A workspace user id or email, or an external actor name. */
  from?: string | null | undefined;
  /** Retries with the same key and input replay the first result for 24 hours (1–255 printable ASCII characters). A key is scoped to the credential and the channel it acts as: the same key for another channel is a new request. */
  idempotencyKey?: string | null | undefined;
  isEncrypted?: boolean | null | undefined;
  mediaUrls?: Array<string> | null | undefined;
  message?: string | null | undefined;
  sender?: RecipientInput | null | undefined;
  silent?: boolean | null | undefined;
  template?: TemplateInput | null | undefined;
  to?: RecipientInput | null | undefined;
  type?: MessageType | null | undefined;
};

export type TemplateInput = {
  language?: string | null | undefined;
  name: string;
  parameters: Array<string>;
};

export type UserErrorCode =
  /** The value breaks a field rule. */
  | 'INVALID'
  /** The object does not exist or is not visible to the caller. */
  | 'NOT_FOUND'
  /** Another contact already holds the value. */
  | 'TAKEN';

export type ApolloViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ApolloViewerQuery = { __typename: 'Query', viewer: { __typename: 'Viewer', channel: { __typename: 'Channel', id: string, name: string }, workspace: { __typename: 'Workspace', id: string, name: string } } | null };

export type ApolloThreadQueryVariables = Exact<{
  before?: string | null | undefined;
  conversationId: string | number;
  last?: number | null | undefined;
}>;


export type ApolloThreadQuery = { __typename: 'Query', messages: { __typename: 'MessageConnection', edges: Array<{ __typename: 'MessageEdge', cursor: string, node: { __typename: 'Message', body: string | null, createdAt: string, direction: MessageDirection, id: string } }>, pageInfo: { __typename: 'PageInfo', hasPreviousPage: boolean, startCursor: string | null } } | null };

export type ApolloSendMessageMutationVariables = Exact<{
  input: SendMessageInput;
}>;


export type ApolloSendMessageMutation = { __typename: 'Mutation', sendMessage: { __typename: 'MessagePayload', message: { __typename: 'Message', body: string | null, conversationId: string, id: string, status: MessageStatus } | null, userErrors: Array<{ __typename: 'UserError', code: UserErrorCode, field: Array<string>, message: string }> } | null };

export type ApolloMessageAddedSubscriptionVariables = Exact<{
  conversationId?: string | number | null | undefined;
}>;


export type ApolloMessageAddedSubscription = { messageAdded: { __typename: 'Message', body: string | null, conversationId: string, id: string } };


export const ApolloViewerDocument = {"__meta__":{"hash":"sha256:d4604b6719c934c0e9d4bc3a673519fc3db6ac3a673efd7db95014f4f06ab2cd"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ApolloViewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"channel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"workspace"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<ApolloViewerQuery, ApolloViewerQueryVariables>;
export const ApolloThreadDocument = {"__meta__":{"hash":"sha256:1f5b5f28c3a2a1c33e325d5e6c8c05bb11f8c8811a237d76fb3fce4171f8cfbd"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ApolloThread"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"before"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"last"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"messages"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"conversationId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}}},{"kind":"Argument","name":{"kind":"Name","value":"last"},"value":{"kind":"Variable","name":{"kind":"Name","value":"last"}}},{"kind":"Argument","name":{"kind":"Name","value":"before"},"value":{"kind":"Variable","name":{"kind":"Name","value":"before"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"hasPreviousPage"}},{"kind":"Field","name":{"kind":"Name","value":"startCursor"}}]}}]}}]}}]} as unknown as DocumentNode<ApolloThreadQuery, ApolloThreadQueryVariables>;
export const ApolloSendMessageDocument = {"__meta__":{"hash":"sha256:b7f8cd22a3238f8d4063f628ef049db625172b193f18d89e548bd8d7c11db4af"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ApolloSendMessage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SendMessageInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"sendMessage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"message"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<ApolloSendMessageMutation, ApolloSendMessageMutationVariables>;
export const ApolloMessageAddedDocument = {"__meta__":{"hash":"sha256:8e9fe9fcd24e9bda08c2a14a7763d0b575fa17002142123e32fc8d172ccc8d28"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ApolloMessageAdded"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messageAdded"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"conversationId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<ApolloMessageAddedSubscription, ApolloMessageAddedSubscriptionVariables>;