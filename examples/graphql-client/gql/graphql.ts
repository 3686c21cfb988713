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


export const ExampleViewerDocument = {"__meta__":{"hash":"sha256:d662be8dc7d06617de8a4334404a94dc29056b1edd4b69568dda08c5d36171ce"}} as unknown as DocumentNode<ExampleViewerQuery, ExampleViewerQueryVariables>;
export const ExampleContactsDocument = {"__meta__":{"hash":"sha256:5d4dc35a8317cfb47410f2299dee3b170129c736603b64f60d0aaa813a2f83f2"}} as unknown as DocumentNode<ExampleContactsQuery, ExampleContactsQueryVariables>;
export const ExampleSendMessageDocument = {"__meta__":{"hash":"sha256:beb6417de2e15fbd5c804b6424243754158c61f11674d0d23ba8ebcd175c759c"}} as unknown as DocumentNode<ExampleSendMessageMutation, ExampleSendMessageMutationVariables>;
export const ExampleMessageAddedDocument = {"__meta__":{"hash":"sha256:0c7fe660d2e913a7533c0bd28f55c19a5573a39a263edaf8312dee83f1936fb7"}} as unknown as DocumentNode<ExampleMessageAddedSubscription, ExampleMessageAddedSubscriptionVariables>;