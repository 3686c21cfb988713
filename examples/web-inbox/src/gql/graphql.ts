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

export type InboxMessageFragment = { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } };

export type InboxConversationFragment = { id: string, status: ConversationStatus, unreadCount: number, labels: Array<string>, lastMessageAt: string | null, lastReadAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null }, assignee: { id: string, name: string, email: string } | null, lastMessage: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null };

export type WebInboxConversationsQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  unread?: boolean | null | undefined;
  assigneeId?: string | number | null | undefined;
  unassigned?: boolean | null | undefined;
  label?: string | null | undefined;
  search?: string | null | undefined;
}>;


export type WebInboxConversationsQuery = { conversations: { edges: Array<{ node: { id: string, status: ConversationStatus, unreadCount: number, labels: Array<string>, lastMessageAt: string | null, lastReadAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null }, assignee: { id: string, name: string, email: string } | null, lastMessage: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } | null };

export type WebInboxThreadQueryVariables = Exact<{
  conversationId: string | number;
  first: number;
  after?: string | null | undefined;
}>;


export type WebInboxThreadQuery = { messages: { edges: Array<{ node: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } | null };

export type WebInboxSendReplyMutationVariables = Exact<{
  input: SendMessageInput;
}>;


export type WebInboxSendReplyMutation = { sendMessage: { message: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null, userErrors: Array<{ field: Array<string>, message: string }> } | null };

export type WebInboxAssignMutationVariables = Exact<{
  id: string | number;
  userId?: string | number | null | undefined;
}>;


export type WebInboxAssignMutation = { assignConversation: { conversation: { id: string, status: ConversationStatus, unreadCount: number, labels: Array<string>, lastMessageAt: string | null, lastReadAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null }, assignee: { id: string, name: string, email: string } | null, lastMessage: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null } | null, userErrors: Array<{ field: Array<string>, message: string }> } | null };

export type WebInboxMarkReadMutationVariables = Exact<{
  id: string | number;
}>;


export type WebInboxMarkReadMutation = { markConversationRead: { conversation: { id: string, status: ConversationStatus, unreadCount: number, labels: Array<string>, lastMessageAt: string | null, lastReadAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null }, assignee: { id: string, name: string, email: string } | null, lastMessage: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null } | null, userErrors: Array<{ field: Array<string>, message: string }> } | null };

export type WebInboxConversationUpdatedSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type WebInboxConversationUpdatedSubscription = { conversationUpdated: { id: string, status: ConversationStatus, unreadCount: number, labels: Array<string>, lastMessageAt: string | null, lastReadAt: string | null, contact: { id: string, name: string, email: string | null, phoneNumber: string | null }, assignee: { id: string, name: string, email: string } | null, lastMessage: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } | null } };

export type WebInboxMessageAddedSubscriptionVariables = Exact<{
  conversationId: string | number;
}>;


export type WebInboxMessageAddedSubscription = { messageAdded: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } };

export type WebInboxMessageUpdatedSubscriptionVariables = Exact<{
  conversationId: string | number;
}>;


export type WebInboxMessageUpdatedSubscription = { messageUpdated: { id: string, conversationId: string, direction: MessageDirection, body: string | null, placeholder: string | null, status: MessageStatus, failureReason: string | null, createdAt: string, sender: { type: ActorType, id: string | null, name: string | null } } };

export const InboxMessageFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InboxMessage"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Message"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"placeholder"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"failureReason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sender"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<InboxMessageFragment, unknown>;
export const InboxConversationFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InboxConversation"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Conversation"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"unreadCount"}},{"kind":"Field","name":{"kind":"Name","value":"labels"}},{"kind":"Field","name":{"kind":"Name","value":"lastMessageAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastReadAt"}},{"kind":"Field","name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phoneNumber"}}]}},{"kind":"Field","name":{"kind":"Name","value":"assignee"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"email"}}]}},{"kind":"Field","name":{"kind":"Name","value":"lastMessage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"InboxMessage"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InboxMessage"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Message"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"conversationId"}},{"kind":"Field","name":{"kind":"Name","value":"direction"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"placeholder"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"failureReason"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"sender"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<InboxConversationFragment, unknown>;
export const WebInboxConversationsDocument = {"__meta__":{"hash":"sha256:5aa3ed98c830e842d2644ff62341492ba25a25478114ac6230b225195ed80aba"}} as unknown as DocumentNode<WebInboxConversationsQuery, WebInboxConversationsQueryVariables>;
export const WebInboxThreadDocument = {"__meta__":{"hash":"sha256:a8343b5fb2d53e76c5498116bbcb910f800e83e3b019989e57410090bb76572d"}} as unknown as DocumentNode<WebInboxThreadQuery, WebInboxThreadQueryVariables>;
export const WebInboxSendReplyDocument = {"__meta__":{"hash":"sha256:bff791ad89e9b2fd4f532be3f968343a21e1ba13ad37e8d5664eec262a0b7291"}} as unknown as DocumentNode<WebInboxSendReplyMutation, WebInboxSendReplyMutationVariables>;
export const WebInboxAssignDocument = {"__meta__":{"hash":"sha256:947abc86788f8c5372551afab9eb87af56f820f40e667d70a00f12c171400783"}} as unknown as DocumentNode<WebInboxAssignMutation, WebInboxAssignMutationVariables>;
export const WebInboxMarkReadDocument = {"__meta__":{"hash":"sha256:1b106a8c7e124a8163a88be51b117de0eded8cb4d19f5b937fc7d708c229a66c"}} as unknown as DocumentNode<WebInboxMarkReadMutation, WebInboxMarkReadMutationVariables>;
export const WebInboxConversationUpdatedDocument = {"__meta__":{"hash":"sha256:f30cbe9b81ee2120d5463155f7e134ffe5c84f734569eeb7da39dad3673c2885"}} as unknown as DocumentNode<WebInboxConversationUpdatedSubscription, WebInboxConversationUpdatedSubscriptionVariables>;
export const WebInboxMessageAddedDocument = {"__meta__":{"hash":"sha256:31cebdde70145afaa6c19ad62b3bf2f00e577adaf05f021391b275463c240ae2"}} as unknown as DocumentNode<WebInboxMessageAddedSubscription, WebInboxMessageAddedSubscriptionVariables>;
export const WebInboxMessageUpdatedDocument = {"__meta__":{"hash":"sha256:d197dd52fc188f3b9d44aed4140758151d18bdcbafdaa656e2816cdaab73b584"}} as unknown as DocumentNode<WebInboxMessageUpdatedSubscription, WebInboxMessageUpdatedSubscriptionVariables>;