/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type ActorType =
  | 'channel'
  | 'contact'
  | 'external'
  | 'user';

export type ChannelStatus =
  | 'active'
  | 'inactive';

export type ChannelType =
  | 'email'
  | 'sms'
  | 'webchat'
  | 'whatsapp';

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

export type ExampleViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type ExampleViewerQuery = { viewer: { workspace: { id: string, name: string }, channel: { id: string, name: string, type: ChannelType, status: ChannelStatus } } | null };

export type ExampleContactsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  search?: string | null | undefined;
}>;


export type ExampleContactsQuery = { contacts: { edges: Array<{ node: { id: string, name: string, email: string | null, phoneNumber: string | null, createdAt: string } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } | null };

export type ExampleSendMessageMutationVariables = Exact<{
  input: SendMessageInput;
}>;


export type ExampleSendMessageMutation = { sendMessage: { message: { id: string, conversationId: string, contactId: string, body: string | null, status: MessageStatus, createdAt: string } | null, userErrors: Array<{ field: Array<string>, message: string, code: UserErrorCode }> } | null };

export type ExampleMessageAddedSubscriptionVariables = Exact<{
  conversationId?: string | number | null | undefined;
}>;


export type ExampleMessageAddedSubscription = { messageAdded: { id: string, conversationId: string, body: string | null, placeholder: string | null, direction: MessageDirection, createdAt: string, sender: { type: ActorType, name: string | null } } };


export const ExampleViewerDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ExampleViewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"viewer"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"workspace"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"channel"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"status"}}]}}]}}]}}]} as unknown as DocumentNode<ExampleViewerQuery, ExampleViewerQueryVariables>;
export const ExampleContactsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ExampleContacts"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"contacts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phoneNumber"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<ExampleContactsQuery, ExampleContactsQueryVariables>;
export const ExampleSendMessageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ExampleSendMessage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SendMessageInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sendMessage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"message"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"contactId"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"userErrors"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"field"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"code"}}]}}]}}]}}]} as unknown as DocumentNode<ExampleSendMessageMutation, ExampleSendMessageMutationVariables>;
export const ExampleMessageAddedDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ExampleMessageAdded"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"messageAdded"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"conversationId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"conversationId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"placeholder"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sender"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<ExampleMessageAddedSubscription, ExampleMessageAddedSubscriptionVariables>;