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

export type ChannelType =
  | 'email'
  | 'sms'
  | 'webchat'
  | 'whatsapp';

export type ConversationStatus =
  | 'closed'
  | 'open';

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

export type InboxViewerQueryVariables = Exact<{ [key: string]: never; }>;


export type InboxViewerQuery = { viewer: { workspace: { id: string, name: string }, channel: { id: string, name: string, type: ChannelType } } | null };

export type InboxConversationsQueryVariables = Exact<{
  first?: number | null | undefined;
}>;


export type InboxConversationsQuery = { conversations: { edges: Array<{ node: { id: string, status: ConversationStatus, lastMessageAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null } } }> } | null };

export type InboxContactsQueryVariables = Exact<{
  first?: number | null | undefined;
  search?: string | null | undefined;
}>;


export type InboxContactsQuery = { contacts: { edges: Array<{ node: { id: string, name: string, email: string | null, phoneNumber: string | null } }> } | null };

export type InboxMessagesQueryVariables = Exact<{
  conversationId: string | number;
  first?: number | null | undefined;
}>;


export type InboxMessagesQuery = { messages: { edges: Array<{ node: { id: string, conversationId: string, contactId: string, body: string | null, placeholder: string | null, direction: MessageDirection, status: MessageStatus, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } }> } | null };

export type InboxSendMessageMutationVariables = Exact<{
  input: SendMessageInput;
}>;


export type InboxSendMessageMutation = { sendMessage: { message: { id: string, conversationId: string, contactId: string, body: string | null, placeholder: string | null, direction: MessageDirection, status: MessageStatus, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null, userErrors: Array<{ field: Array<string>, message: string, code: UserErrorCode }> } | null };

export type InboxMessageAddedSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type InboxMessageAddedSubscription = { messageAdded: { id: string, conversationId: string, contactId: string, body: string | null, placeholder: string | null, direction: MessageDirection, status: MessageStatus, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null }, contact: { id: string, name: string, email: string | null, phoneNumber: string | null } } };


export const InboxViewerDocument = {"__meta__":{"hash":"sha256:cb30d1c1fff0bb51710ba19d658da2eeed3a4964b9fabea778c17498e2834f33"}} as unknown as DocumentNode<InboxViewerQuery, InboxViewerQueryVariables>;
export const InboxConversationsDocument = {"__meta__":{"hash":"sha256:97ae3c40dd16db8c01131da289e63a786fac6ad1422ca5d0538a9032af96f9f5"}} as unknown as DocumentNode<InboxConversationsQuery, InboxConversationsQueryVariables>;
export const InboxContactsDocument = {"__meta__":{"hash":"sha256:0de5dbf250d02306dec254bfe8c6b1d8474621a636653f5446782d921381dee4"}} as unknown as DocumentNode<InboxContactsQuery, InboxContactsQueryVariables>;
export const InboxMessagesDocument = {"__meta__":{"hash":"sha256:aea347ebbc2196fa48b29b9e14233a44d2931402204da9ffe268292807bde323"}} as unknown as DocumentNode<InboxMessagesQuery, InboxMessagesQueryVariables>;
export const InboxSendMessageDocument = {"__meta__":{"hash":"sha256:1a447cce00c3700396604d3d5ab360da1bdce0fa6f4abea4c09fa99cb71d12d2"}} as unknown as DocumentNode<InboxSendMessageMutation, InboxSendMessageMutationVariables>;
export const InboxMessageAddedDocument = {"__meta__":{"hash":"sha256:1a03bac65ca3c9ad4bc1e30215a59c8f5f4a20ca7334a8bf4743b13ab6691240"}} as unknown as DocumentNode<InboxMessageAddedSubscription, InboxMessageAddedSubscriptionVariables>;