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
    "\n  query PageContacts($first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    contacts(first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageContactsDocument,
    "\n  query PageConversations($first: Int, $after: String, $last: Int, $before: String) {\n    conversations(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageConversationsDocument,
    "\n  query PageMessages($conversationId: ID, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageMessagesDocument,
    "\n  query PageMessagesInOrder($conversationId: ID, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, order: $order, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageMessagesInOrderDocument,
    "\n  query PageMessagesWithSender($conversationId: ID, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body sender { type name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageMessagesWithSenderDocument,
    "\n  query PageConversationMessages($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": typeof types.PageConversationMessagesDocument,
    "\n  query PageConversationMessagesInOrder($id: ID!, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(order: $order, first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": typeof types.PageConversationMessagesInOrderDocument,
    "\n  query InboxThreads($order: MessageOrder, $last: Int) {\n    conversations(first: 10) {\n      edges { node { id messages(order: $order, last: $last) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }\n    }\n  }\n": typeof types.InboxThreadsDocument,
    "\n  query PageTemplates($first: Int, $after: String, $last: Int, $before: String) {\n    templates(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.PageTemplatesDocument,
    "\n  subscription WideMessageAdded {\n    messageAdded { id body channelId }\n  }\n": typeof types.WideMessageAddedDocument,
    "\n  mutation EdgeSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id sender { name } contact { id name } conversation { id contact { id } stateChanges { type } } }\n      userErrors { field message code }\n    }\n  }\n": typeof types.EdgeSendMessageDocument,
    "\n  mutation EdgeCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id name email } userErrors { field message code } }\n  }\n": typeof types.EdgeCreateContactDocument,
    "\n  mutation EdgeUpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) { contact { id name } userErrors { field message code } }\n  }\n": typeof types.EdgeUpdateContactDocument,
    "\n  mutation EdgeCloseConversation($id: ID!) {\n    closeConversation(id: $id) {\n      conversation {\n        id\n        contact { id name }\n        stateChanges { type actor { type name } }\n        messages(first: 50) { edges { node { id sender { name } contact { id } conversation { id } } } }\n      }\n      userErrors { field message code }\n    }\n  }\n": typeof types.EdgeCloseConversationDocument,
    "\n  mutation EdgeReopenConversation($id: ID!) {\n    reopenConversation(id: $id) {\n      conversation { id contact { id } stateChanges { type } messages(first: 5) { edges { node { id } } } }\n      userErrors { field message code }\n    }\n  }\n": typeof types.EdgeReopenConversationDocument,
    "\n  subscription EdgeMessageAdded {\n    messageAdded { id body }\n  }\n": typeof types.EdgeMessageAddedDocument,
    "\n  subscription EdgeConversationUpdated {\n    conversationUpdated { id status }\n  }\n": typeof types.EdgeConversationUpdatedDocument,
    "\n  query ErrorShapesViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n": typeof types.ErrorShapesViewerDocument,
    "\n  subscription ErrorShapesAdded {\n    messageAdded {\n      id\n    }\n  }\n": typeof types.ErrorShapesAddedDocument,
    "\n  subscription FanOutMessageAdded {\n    messageAdded { id body }\n  }\n": typeof types.FanOutMessageAddedDocument,
    "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Contact { name email }\n      ... on Conversation { status contact { id name } messages(first: 5) { edges { node { id body } } pageInfo { hasNextPage } } }\n      ... on Message { body placeholder isEncrypted sender { type name } conversation { id } }\n      ... on Channel { name type }\n      ... on Template { name language }\n      ... on User { name userEmail: email }\n    }\n  }\n": typeof types.NodeByIdDocument,
    "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Contact { name }\n      ... on Message { body }\n      ... on Conversation { contact { name } }\n    }\n  }\n": typeof types.NodesByIdsDocument,
    "\n  query NodesDeep($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Contact { name }\n      ... on Conversation { status contact { name } messages(first: 5) { edges { node { body contact { name } } } } }\n      ... on Message { body sender { name } conversation { status } }\n    }\n  }\n": typeof types.NodesDeepDocument,
    "\n  query NodeInterpreted($id: ID!, $withContact: Boolean!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation { contact @include(if: $withContact) { name } }\n      ... on Message { body placeholder }\n    }\n  }\n": typeof types.NodeInterpretedDocument,
    "\n  query NodesWithMessages($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Conversation { messages(first: 100) { edges { node { id body } } } }\n    }\n  }\n": typeof types.NodesWithMessagesDocument,
    "\n  subscription SingleStreamMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n    }\n  }\n": typeof types.SingleStreamMessageAddedDocument,
    "\n  query SingleStreamViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n": typeof types.SingleStreamViewerDocument,
    "\n  subscription MessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id body placeholder conversationId sender { type name } }\n  }\n": typeof types.MessageAddedDocument,
    "\n  subscription ConversationUpdated {\n    conversationUpdated { id status }\n  }\n": typeof types.ConversationUpdatedDocument,
    "\n  query ConversationsDeep($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          contact { id name }\n          stateChanges { type actor { type id name } }\n          messages(first: 3) {\n            edges { node { id body sender { type name } contact { id } conversation { id } } }\n          }\n        }\n      }\n    }\n  }\n": typeof types.ConversationsDeepDocument,
    "\n  query MessagesDeep($first: Int) {\n    messages(first: $first) {\n      edges { node { id body sender { type id name } contact { id name email } conversation { id status stateChanges { type } } } }\n    }\n  }\n": typeof types.MessagesDeepDocument,
    "query Ping { viewer { workspace { name } } }": typeof types.PingDocument,
    "\n  query Viewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n    channels { id }\n  }\n": typeof types.ViewerDocument,
    "\n  query ViewerWho {\n    viewer {\n      user { id name email }\n      scopes\n      expiresAt\n      channels { id name }\n    }\n  }\n": typeof types.ViewerWhoDocument,
    "\n  query SocketViewer {\n    viewer {\n      workspace {\n        name\n      }\n      channel {\n        id\n      }\n    }\n  }\n": typeof types.SocketViewerDocument,
    "\n  mutation SocketRename($id: ID!, $name: String) {\n    updateContact(id: $id, input: { name: $name }) {\n      contact {\n        id\n        name\n      }\n      userErrors {\n        message\n      }\n    }\n  }\n": typeof types.SocketRenameDocument,
    "\n  subscription SocketMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n      conversationId\n    }\n  }\n": typeof types.SocketMessageAddedDocument,
    "\n  query SocketTooDeep {\n    conversations {\n      edges {\n        node {\n          messages {\n            edges {\n              node {\n                conversation {\n                  messages {\n                    edges {\n                      node {\n                        conversation {\n                          id\n                        }\n                      }\n                    }\n                  }\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": typeof types.SocketTooDeepDocument,
    "\n  mutation ActivityReport($conversationId: ID!, $typing: Boolean!, $from: ID) {\n    reportActivity(conversationId: $conversationId, typing: $typing, from: $from) { reported userErrors { field message code } }\n  }\n": typeof types.ActivityReportDocument,
    "\n  query Contact($id: ID!) {\n    contact(id: $id) { id name email phoneNumber isGroup createdAt updatedAt }\n  }\n": typeof types.ContactDocument,
    "\n  query FindContact($email: String, $phone: String) {\n    findContact(email: $email, phone: $phone) { id name }\n  }\n": typeof types.FindContactDocument,
    "\n  query Contacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { cursor node { id name } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.ContactsDocument,
    "\n  mutation CreateContact($input: CreateContactInput!) {\n    createContact(input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n": typeof types.CreateContactDocument,
    "\n  mutation UpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n": typeof types.UpdateContactDocument,
    "\n  mutation SendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id body placeholder isEncrypted status type silent mediaUrls\n        sender { type id name }\n        contact { id name }\n        conversation { id status }\n      }\n      userErrors { field message code }\n    }\n  }\n": typeof types.SendMessageDocument,
    "\n  query Conversation($id: ID!) {\n    conversation(id: $id) {\n      id status closedAt\n      contact { id }\n      stateChanges { type at actor { type id name } }\n      messages(first: 2) { edges { node { id body } } pageInfo { hasNextPage endCursor } }\n    }\n  }\n": typeof types.ConversationDocument,
    "\n  mutation CloseConversation($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n": typeof types.CloseConversationDocument,
    "\n  mutation ReopenConversation($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n": typeof types.ReopenConversationDocument,
    "\n  query Messages($search: String, $conversationId: ID, $first: Int) {\n    messages(search: $search, conversationId: $conversationId, first: $first) {\n      edges { node { id body placeholder isEncrypted } }\n      pageInfo { hasNextPage }\n    }\n  }\n": typeof types.MessagesDocument,
    "\n  query Conversations($status: ConversationStatus) {\n    conversations(status: $status) { edges { node { id status } } }\n  }\n": typeof types.ConversationsDocument,
    "\n  query Templates {\n    templates { edges { node { id name language category status body parameterCount } } }\n  }\n": typeof types.TemplatesDocument,
    "\n  mutation InboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { id assignee { id name email } stateChanges { type actor { type id } } }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxAssignDocument,
    "\n  mutation InboxRead($id: ID!, $throughMessageId: ID) {\n    markConversationRead(id: $id, throughMessageId: $throughMessageId) {\n      conversation { id lastReadAt unreadCount }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxReadDocument,
    "\n  mutation InboxLabels($id: ID!, $add: [String!], $remove: [String!]) {\n    updateConversationLabels(id: $id, add: $add, remove: $remove) {\n      conversation { id labels }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxLabelsDocument,
    "\n  query InboxPage($first: Int, $after: String, $assigneeId: ID, $unassigned: Boolean, $unread: Boolean, $label: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, assigneeId: $assigneeId, unassigned: $unassigned, unread: $unread, label: $label, search: $search, sort: $sort) {\n      edges { node { id labels unreadCount lastReadAt assignee { id } lastMessage { id body direction } contact { id name } } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.InboxPageDocument,
    "\n  query InboxUsers($first: Int, $after: String) {\n    users(first: $first, after: $after) { edges { node { id name email } } pageInfo { hasNextPage endCursor } }\n  }\n": typeof types.InboxUsersDocument,
    "\n  query InboxSearchPage($first: Int, $after: String, $last: Int, $before: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, last: $last, before: $before, search: $search, sort: $sort) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": typeof types.InboxSearchPageDocument,
    "\n  query InboxConversation($id: ID!) {\n    conversation(id: $id) {\n      id channelId stateChanges { type }\n      messages(first: 10) { edges { node { id } } }\n    }\n    messages(conversationId: $id, first: 10) { edges { node { id } } }\n  }\n": typeof types.InboxConversationDocument,
    "\n  query InboxChannels {\n    conversations(first: 50) { edges { node { id channelId } } }\n  }\n": typeof types.InboxChannelsDocument,
    "\n  mutation InboxClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id } } } userErrors { field code } }\n  }\n": typeof types.InboxCloseDocument,
    "\n  mutation InboxReopen($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status } userErrors { field code } }\n  }\n": typeof types.InboxReopenDocument,
    "\n  query InboxRefetch($id: ID!, $ids: [ID!]!) {\n    node(id: $id) { __typename id ... on Conversation { channelId status } }\n    nodes(ids: $ids) { __typename id }\n  }\n": typeof types.InboxRefetchDocument,
    "\n  mutation InboxSendOn($contactId: ID!, $channelId: ID) {\n    sendMessage(input: { to: { contactId: $contactId }, type: text, message: \"which channel?\", channelId: $channelId }) {\n      message { id conversationId }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxSendOnDocument,
    "\n  mutation InboxCreateContactOn($phone: String!, $channelId: ID) {\n    createContact(input: { name: \"Linked\", phone: $phone, channelId: $channelId }) {\n      contact { id }\n      userErrors { field message code }\n    }\n  }\n": typeof types.InboxCreateContactOnDocument,
    "\n    mutation IdempotentSend($input: SendMessageInput!) {\n      sendMessage(input: $input) { message { id body conversation { id } } userErrors { field message code } }\n    }\n  ": typeof types.IdempotentSendDocument,
    "\n    mutation IdempotentCreateContact($input: CreateContactInput!) {\n      createContact(input: $input) { contact { id email } userErrors { field message } }\n    }\n  ": typeof types.IdempotentCreateContactDocument,
    "\n      mutation IdempotentSendReplay($input: SendMessageInput!) {\n        sendMessage(input: $input) { message { id body } userErrors { field message } }\n      }\n    ": typeof types.IdempotentSendReplayDocument,
    "\n  mutation CreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) {\n      session { id token user { id name email } scopes channelIds origins expiresAt createdAt }\n      userErrors { field message code }\n    }\n  }\n": typeof types.CreateSessionDocument,
    "\n  subscription StreamMessageAdded {\n    messageAdded { id body sender { type id name } }\n  }\n": typeof types.StreamMessageAddedDocument,
    "\n  subscription StreamConversationUpdated {\n    conversationUpdated { id status }\n  }\n": typeof types.StreamConversationUpdatedDocument,
    "\n  query SessionViewer {\n    viewer { channel { id } }\n  }\n": typeof types.SessionViewerDocument,
    "\n  mutation SessionSend($input: SendMessageInput!) {\n    sendMessage(input: $input) { message { id sender { type id name } } userErrors { field message } }\n  }\n": typeof types.SessionSendDocument,
    "\n  mutation SessionCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id } userErrors { field message } }\n  }\n": typeof types.SessionCreateContactDocument,
    "\n  mutation SessionClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id name } } } userErrors { field message } }\n  }\n": typeof types.SessionCloseDocument,
    "\n  subscription RefreshMessageAdded {\n    messageAdded { id body }\n  }\n": typeof types.RefreshMessageAddedDocument,
};
const documents: Documents = {
    "\n  query PageContacts($first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    contacts(first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageContactsDocument,
    "\n  query PageConversations($first: Int, $after: String, $last: Int, $before: String) {\n    conversations(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageConversationsDocument,
    "\n  query PageMessages($conversationId: ID, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageMessagesDocument,
    "\n  query PageMessagesInOrder($conversationId: ID, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, order: $order, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageMessagesInOrderDocument,
    "\n  query PageMessagesWithSender($conversationId: ID, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body sender { type name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageMessagesWithSenderDocument,
    "\n  query PageConversationMessages($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": types.PageConversationMessagesDocument,
    "\n  query PageConversationMessagesInOrder($id: ID!, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(order: $order, first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n": types.PageConversationMessagesInOrderDocument,
    "\n  query InboxThreads($order: MessageOrder, $last: Int) {\n    conversations(first: 10) {\n      edges { node { id messages(order: $order, last: $last) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }\n    }\n  }\n": types.InboxThreadsDocument,
    "\n  query PageTemplates($first: Int, $after: String, $last: Int, $before: String) {\n    templates(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.PageTemplatesDocument,
    "\n  subscription WideMessageAdded {\n    messageAdded { id body channelId }\n  }\n": types.WideMessageAddedDocument,
    "\n  mutation EdgeSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id sender { name } contact { id name } conversation { id contact { id } stateChanges { type } } }\n      userErrors { field message code }\n    }\n  }\n": types.EdgeSendMessageDocument,
    "\n  mutation EdgeCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id name email } userErrors { field message code } }\n  }\n": types.EdgeCreateContactDocument,
    "\n  mutation EdgeUpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) { contact { id name } userErrors { field message code } }\n  }\n": types.EdgeUpdateContactDocument,
    "\n  mutation EdgeCloseConversation($id: ID!) {\n    closeConversation(id: $id) {\n      conversation {\n        id\n        contact { id name }\n        stateChanges { type actor { type name } }\n        messages(first: 50) { edges { node { id sender { name } contact { id } conversation { id } } } }\n      }\n      userErrors { field message code }\n    }\n  }\n": types.EdgeCloseConversationDocument,
    "\n  mutation EdgeReopenConversation($id: ID!) {\n    reopenConversation(id: $id) {\n      conversation { id contact { id } stateChanges { type } messages(first: 5) { edges { node { id } } } }\n      userErrors { field message code }\n    }\n  }\n": types.EdgeReopenConversationDocument,
    "\n  subscription EdgeMessageAdded {\n    messageAdded { id body }\n  }\n": types.EdgeMessageAddedDocument,
    "\n  subscription EdgeConversationUpdated {\n    conversationUpdated { id status }\n  }\n": types.EdgeConversationUpdatedDocument,
    "\n  query ErrorShapesViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n": types.ErrorShapesViewerDocument,
    "\n  subscription ErrorShapesAdded {\n    messageAdded {\n      id\n    }\n  }\n": types.ErrorShapesAddedDocument,
    "\n  subscription FanOutMessageAdded {\n    messageAdded { id body }\n  }\n": types.FanOutMessageAddedDocument,
    "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Contact { name email }\n      ... on Conversation { status contact { id name } messages(first: 5) { edges { node { id body } } pageInfo { hasNextPage } } }\n      ... on Message { body placeholder isEncrypted sender { type name } conversation { id } }\n      ... on Channel { name type }\n      ... on Template { name language }\n      ... on User { name userEmail: email }\n    }\n  }\n": types.NodeByIdDocument,
    "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Contact { name }\n      ... on Message { body }\n      ... on Conversation { contact { name } }\n    }\n  }\n": types.NodesByIdsDocument,
    "\n  query NodesDeep($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Contact { name }\n      ... on Conversation { status contact { name } messages(first: 5) { edges { node { body contact { name } } } } }\n      ... on Message { body sender { name } conversation { status } }\n    }\n  }\n": types.NodesDeepDocument,
    "\n  query NodeInterpreted($id: ID!, $withContact: Boolean!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation { contact @include(if: $withContact) { name } }\n      ... on Message { body placeholder }\n    }\n  }\n": types.NodeInterpretedDocument,
    "\n  query NodesWithMessages($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Conversation { messages(first: 100) { edges { node { id body } } } }\n    }\n  }\n": types.NodesWithMessagesDocument,
    "\n  subscription SingleStreamMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n    }\n  }\n": types.SingleStreamMessageAddedDocument,
    "\n  query SingleStreamViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n": types.SingleStreamViewerDocument,
    "\n  subscription MessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id body placeholder conversationId sender { type name } }\n  }\n": types.MessageAddedDocument,
    "\n  subscription ConversationUpdated {\n    conversationUpdated { id status }\n  }\n": types.ConversationUpdatedDocument,
    "\n  query ConversationsDeep($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          contact { id name }\n          stateChanges { type actor { type id name } }\n          messages(first: 3) {\n            edges { node { id body sender { type name } contact { id } conversation { id } } }\n          }\n        }\n      }\n    }\n  }\n": types.ConversationsDeepDocument,
    "\n  query MessagesDeep($first: Int) {\n    messages(first: $first) {\n      edges { node { id body sender { type id name } contact { id name email } conversation { id status stateChanges { type } } } }\n    }\n  }\n": types.MessagesDeepDocument,
    "query Ping { viewer { workspace { name } } }": types.PingDocument,
    "\n  query Viewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n    channels { id }\n  }\n": types.ViewerDocument,
    "\n  query ViewerWho {\n    viewer {\n      user { id name email }\n      scopes\n      expiresAt\n      channels { id name }\n    }\n  }\n": types.ViewerWhoDocument,
    "\n  query SocketViewer {\n    viewer {\n      workspace {\n        name\n      }\n      channel {\n        id\n      }\n    }\n  }\n": types.SocketViewerDocument,
    "\n  mutation SocketRename($id: ID!, $name: String) {\n    updateContact(id: $id, input: { name: $name }) {\n      contact {\n        id\n        name\n      }\n      userErrors {\n        message\n      }\n    }\n  }\n": types.SocketRenameDocument,
    "\n  subscription SocketMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n      conversationId\n    }\n  }\n": types.SocketMessageAddedDocument,
    "\n  query SocketTooDeep {\n    conversations {\n      edges {\n        node {\n          messages {\n            edges {\n              node {\n                conversation {\n                  messages {\n                    edges {\n                      node {\n                        conversation {\n                          id\n                        }\n                      }\n                    }\n                  }\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n": types.SocketTooDeepDocument,
    "\n  mutation ActivityReport($conversationId: ID!, $typing: Boolean!, $from: ID) {\n    reportActivity(conversationId: $conversationId, typing: $typing, from: $from) { reported userErrors { field message code } }\n  }\n": types.ActivityReportDocument,
    "\n  query Contact($id: ID!) {\n    contact(id: $id) { id name email phoneNumber isGroup createdAt updatedAt }\n  }\n": types.ContactDocument,
    "\n  query FindContact($email: String, $phone: String) {\n    findContact(email: $email, phone: $phone) { id name }\n  }\n": types.FindContactDocument,
    "\n  query Contacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { cursor node { id name } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.ContactsDocument,
    "\n  mutation CreateContact($input: CreateContactInput!) {\n    createContact(input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n": types.CreateContactDocument,
    "\n  mutation UpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n": types.UpdateContactDocument,
    "\n  mutation SendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id body placeholder isEncrypted status type silent mediaUrls\n        sender { type id name }\n        contact { id name }\n        conversation { id status }\n      }\n      userErrors { field message code }\n    }\n  }\n": types.SendMessageDocument,
    "\n  query Conversation($id: ID!) {\n    conversation(id: $id) {\n      id status closedAt\n      contact { id }\n      stateChanges { type at actor { type id name } }\n      messages(first: 2) { edges { node { id body } } pageInfo { hasNextPage endCursor } }\n    }\n  }\n": types.ConversationDocument,
    "\n  mutation CloseConversation($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n": types.CloseConversationDocument,
    "\n  mutation ReopenConversation($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n": types.ReopenConversationDocument,
    "\n  query Messages($search: String, $conversationId: ID, $first: Int) {\n    messages(search: $search, conversationId: $conversationId, first: $first) {\n      edges { node { id body placeholder isEncrypted } }\n      pageInfo { hasNextPage }\n    }\n  }\n": types.MessagesDocument,
    "\n  query Conversations($status: ConversationStatus) {\n    conversations(status: $status) { edges { node { id status } } }\n  }\n": types.ConversationsDocument,
    "\n  query Templates {\n    templates { edges { node { id name language category status body parameterCount } } }\n  }\n": types.TemplatesDocument,
    "\n  mutation InboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { id assignee { id name email } stateChanges { type actor { type id } } }\n      userErrors { field message code }\n    }\n  }\n": types.InboxAssignDocument,
    "\n  mutation InboxRead($id: ID!, $throughMessageId: ID) {\n    markConversationRead(id: $id, throughMessageId: $throughMessageId) {\n      conversation { id lastReadAt unreadCount }\n      userErrors { field message code }\n    }\n  }\n": types.InboxReadDocument,
    "\n  mutation InboxLabels($id: ID!, $add: [String!], $remove: [String!]) {\n    updateConversationLabels(id: $id, add: $add, remove: $remove) {\n      conversation { id labels }\n      userErrors { field message code }\n    }\n  }\n": types.InboxLabelsDocument,
    "\n  query InboxPage($first: Int, $after: String, $assigneeId: ID, $unassigned: Boolean, $unread: Boolean, $label: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, assigneeId: $assigneeId, unassigned: $unassigned, unread: $unread, label: $label, search: $search, sort: $sort) {\n      edges { node { id labels unreadCount lastReadAt assignee { id } lastMessage { id body direction } contact { id name } } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.InboxPageDocument,
    "\n  query InboxUsers($first: Int, $after: String) {\n    users(first: $first, after: $after) { edges { node { id name email } } pageInfo { hasNextPage endCursor } }\n  }\n": types.InboxUsersDocument,
    "\n  query InboxSearchPage($first: Int, $after: String, $last: Int, $before: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, last: $last, before: $before, search: $search, sort: $sort) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n": types.InboxSearchPageDocument,
    "\n  query InboxConversation($id: ID!) {\n    conversation(id: $id) {\n      id channelId stateChanges { type }\n      messages(first: 10) { edges { node { id } } }\n    }\n    messages(conversationId: $id, first: 10) { edges { node { id } } }\n  }\n": types.InboxConversationDocument,
    "\n  query InboxChannels {\n    conversations(first: 50) { edges { node { id channelId } } }\n  }\n": types.InboxChannelsDocument,
    "\n  mutation InboxClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id } } } userErrors { field code } }\n  }\n": types.InboxCloseDocument,
    "\n  mutation InboxReopen($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status } userErrors { field code } }\n  }\n": types.InboxReopenDocument,
    "\n  query InboxRefetch($id: ID!, $ids: [ID!]!) {\n    node(id: $id) { __typename id ... on Conversation { channelId status } }\n    nodes(ids: $ids) { __typename id }\n  }\n": types.InboxRefetchDocument,
    "\n  mutation InboxSendOn($contactId: ID!, $channelId: ID) {\n    sendMessage(input: { to: { contactId: $contactId }, type: text, message: \"which channel?\", channelId: $channelId }) {\n      message { id conversationId }\n      userErrors { field message code }\n    }\n  }\n": types.InboxSendOnDocument,
    "\n  mutation InboxCreateContactOn($phone: String!, $channelId: ID) {\n    createContact(input: { name: \"Linked\", phone: $phone, channelId: $channelId }) {\n      contact { id }\n      userErrors { field message code }\n    }\n  }\n": types.InboxCreateContactOnDocument,
    "\n    mutation IdempotentSend($input: SendMessageInput!) {\n      sendMessage(input: $input) { message { id body conversation { id } } userErrors { field message code } }\n    }\n  ": types.IdempotentSendDocument,
    "\n    mutation IdempotentCreateContact($input: CreateContactInput!) {\n      createContact(input: $input) { contact { id email } userErrors { field message } }\n    }\n  ": types.IdempotentCreateContactDocument,
    "\n      mutation IdempotentSendReplay($input: SendMessageInput!) {\n        sendMessage(input: $input) { message { id body } userErrors { field message } }\n      }\n    ": types.IdempotentSendReplayDocument,
    "\n  mutation CreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) {\n      session { id token user { id name email } scopes channelIds origins expiresAt createdAt }\n      userErrors { field message code }\n    }\n  }\n": types.CreateSessionDocument,
    "\n  subscription StreamMessageAdded {\n    messageAdded { id body sender { type id name } }\n  }\n": types.StreamMessageAddedDocument,
    "\n  subscription StreamConversationUpdated {\n    conversationUpdated { id status }\n  }\n": types.StreamConversationUpdatedDocument,
    "\n  query SessionViewer {\n    viewer { channel { id } }\n  }\n": types.SessionViewerDocument,
    "\n  mutation SessionSend($input: SendMessageInput!) {\n    sendMessage(input: $input) { message { id sender { type id name } } userErrors { field message } }\n  }\n": types.SessionSendDocument,
    "\n  mutation SessionCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id } userErrors { field message } }\n  }\n": types.SessionCreateContactDocument,
    "\n  mutation SessionClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id name } } } userErrors { field message } }\n  }\n": types.SessionCloseDocument,
    "\n  subscription RefreshMessageAdded {\n    messageAdded { id body }\n  }\n": types.RefreshMessageAddedDocument,
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
export function graphql(source: "\n  query PageContacts($first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    contacts(first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageContacts($first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    contacts(first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageConversations($first: Int, $after: String, $last: Int, $before: String) {\n    conversations(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageConversations($first: Int, $after: String, $last: Int, $before: String) {\n    conversations(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageMessages($conversationId: ID, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageMessages($conversationId: ID, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageMessagesInOrder($conversationId: ID, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, order: $order, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageMessagesInOrder($conversationId: ID, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String, $search: String) {\n    messages(conversationId: $conversationId, order: $order, first: $first, after: $after, last: $last, before: $before, search: $search) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageMessagesWithSender($conversationId: ID, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body sender { type name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageMessagesWithSender($conversationId: ID, $last: Int, $before: String) {\n    messages(conversationId: $conversationId, last: $last, before: $before) {\n      edges { cursor node { id body sender { type name } } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageConversationMessages($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"): (typeof documents)["\n  query PageConversationMessages($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageConversationMessagesInOrder($id: ID!, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(order: $order, first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"): (typeof documents)["\n  query PageConversationMessagesInOrder($id: ID!, $order: MessageOrder, $first: Int, $after: String, $last: Int, $before: String) {\n    conversation(id: $id) {\n      messages(order: $order, first: $first, after: $after, last: $last, before: $before) {\n        edges { cursor node { id } }\n        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxThreads($order: MessageOrder, $last: Int) {\n    conversations(first: 10) {\n      edges { node { id messages(order: $order, last: $last) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }\n    }\n  }\n"): (typeof documents)["\n  query InboxThreads($order: MessageOrder, $last: Int) {\n    conversations(first: 10) {\n      edges { node { id messages(order: $order, last: $last) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PageTemplates($first: Int, $after: String, $last: Int, $before: String) {\n    templates(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query PageTemplates($first: Int, $after: String, $last: Int, $before: String) {\n    templates(first: $first, after: $after, last: $last, before: $before) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription WideMessageAdded {\n    messageAdded { id body channelId }\n  }\n"): (typeof documents)["\n  subscription WideMessageAdded {\n    messageAdded { id body channelId }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EdgeSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id sender { name } contact { id name } conversation { id contact { id } stateChanges { type } } }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation EdgeSendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message { id sender { name } contact { id name } conversation { id contact { id } stateChanges { type } } }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EdgeCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id name email } userErrors { field message code } }\n  }\n"): (typeof documents)["\n  mutation EdgeCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id name email } userErrors { field message code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EdgeUpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) { contact { id name } userErrors { field message code } }\n  }\n"): (typeof documents)["\n  mutation EdgeUpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) { contact { id name } userErrors { field message code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EdgeCloseConversation($id: ID!) {\n    closeConversation(id: $id) {\n      conversation {\n        id\n        contact { id name }\n        stateChanges { type actor { type name } }\n        messages(first: 50) { edges { node { id sender { name } contact { id } conversation { id } } } }\n      }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation EdgeCloseConversation($id: ID!) {\n    closeConversation(id: $id) {\n      conversation {\n        id\n        contact { id name }\n        stateChanges { type actor { type name } }\n        messages(first: 50) { edges { node { id sender { name } contact { id } conversation { id } } } }\n      }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EdgeReopenConversation($id: ID!) {\n    reopenConversation(id: $id) {\n      conversation { id contact { id } stateChanges { type } messages(first: 5) { edges { node { id } } } }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation EdgeReopenConversation($id: ID!) {\n    reopenConversation(id: $id) {\n      conversation { id contact { id } stateChanges { type } messages(first: 5) { edges { node { id } } } }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription EdgeMessageAdded {\n    messageAdded { id body }\n  }\n"): (typeof documents)["\n  subscription EdgeMessageAdded {\n    messageAdded { id body }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription EdgeConversationUpdated {\n    conversationUpdated { id status }\n  }\n"): (typeof documents)["\n  subscription EdgeConversationUpdated {\n    conversationUpdated { id status }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ErrorShapesViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  query ErrorShapesViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ErrorShapesAdded {\n    messageAdded {\n      id\n    }\n  }\n"): (typeof documents)["\n  subscription ErrorShapesAdded {\n    messageAdded {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription FanOutMessageAdded {\n    messageAdded { id body }\n  }\n"): (typeof documents)["\n  subscription FanOutMessageAdded {\n    messageAdded { id body }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Contact { name email }\n      ... on Conversation { status contact { id name } messages(first: 5) { edges { node { id body } } pageInfo { hasNextPage } } }\n      ... on Message { body placeholder isEncrypted sender { type name } conversation { id } }\n      ... on Channel { name type }\n      ... on Template { name language }\n      ... on User { name userEmail: email }\n    }\n  }\n"): (typeof documents)["\n  query NodeById($id: ID!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Contact { name email }\n      ... on Conversation { status contact { id name } messages(first: 5) { edges { node { id body } } pageInfo { hasNextPage } } }\n      ... on Message { body placeholder isEncrypted sender { type name } conversation { id } }\n      ... on Channel { name type }\n      ... on Template { name language }\n      ... on User { name userEmail: email }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Contact { name }\n      ... on Message { body }\n      ... on Conversation { contact { name } }\n    }\n  }\n"): (typeof documents)["\n  query NodesByIds($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      __typename\n      id\n      ... on Contact { name }\n      ... on Message { body }\n      ... on Conversation { contact { name } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodesDeep($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Contact { name }\n      ... on Conversation { status contact { name } messages(first: 5) { edges { node { body contact { name } } } } }\n      ... on Message { body sender { name } conversation { status } }\n    }\n  }\n"): (typeof documents)["\n  query NodesDeep($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Contact { name }\n      ... on Conversation { status contact { name } messages(first: 5) { edges { node { body contact { name } } } } }\n      ... on Message { body sender { name } conversation { status } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodeInterpreted($id: ID!, $withContact: Boolean!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation { contact @include(if: $withContact) { name } }\n      ... on Message { body placeholder }\n    }\n  }\n"): (typeof documents)["\n  query NodeInterpreted($id: ID!, $withContact: Boolean!) {\n    node(id: $id) {\n      __typename\n      id\n      ... on Conversation { contact @include(if: $withContact) { name } }\n      ... on Message { body placeholder }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query NodesWithMessages($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Conversation { messages(first: 100) { edges { node { id body } } } }\n    }\n  }\n"): (typeof documents)["\n  query NodesWithMessages($ids: [ID!]!) {\n    nodes(ids: $ids) {\n      id\n      ... on Conversation { messages(first: 100) { edges { node { id body } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SingleStreamMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n    }\n  }\n"): (typeof documents)["\n  subscription SingleStreamMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SingleStreamViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n"): (typeof documents)["\n  query SingleStreamViewer {\n    viewer {\n      workspace {\n        name\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription MessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id body placeholder conversationId sender { type name } }\n  }\n"): (typeof documents)["\n  subscription MessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) { id body placeholder conversationId sender { type name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ConversationUpdated {\n    conversationUpdated { id status }\n  }\n"): (typeof documents)["\n  subscription ConversationUpdated {\n    conversationUpdated { id status }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ConversationsDeep($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          contact { id name }\n          stateChanges { type actor { type id name } }\n          messages(first: 3) {\n            edges { node { id body sender { type name } contact { id } conversation { id } } }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ConversationsDeep($first: Int) {\n    conversations(first: $first) {\n      edges {\n        node {\n          id\n          contact { id name }\n          stateChanges { type actor { type id name } }\n          messages(first: 3) {\n            edges { node { id body sender { type name } contact { id } conversation { id } } }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MessagesDeep($first: Int) {\n    messages(first: $first) {\n      edges { node { id body sender { type id name } contact { id name email } conversation { id status stateChanges { type } } } }\n    }\n  }\n"): (typeof documents)["\n  query MessagesDeep($first: Int) {\n    messages(first: $first) {\n      edges { node { id body sender { type id name } contact { id name email } conversation { id status stateChanges { type } } } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Ping { viewer { workspace { name } } }"): (typeof documents)["query Ping { viewer { workspace { name } } }"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n    channels { id }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer {\n      workspace { id name }\n      channel { id name type status }\n    }\n    channels { id }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ViewerWho {\n    viewer {\n      user { id name email }\n      scopes\n      expiresAt\n      channels { id name }\n    }\n  }\n"): (typeof documents)["\n  query ViewerWho {\n    viewer {\n      user { id name email }\n      scopes\n      expiresAt\n      channels { id name }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SocketViewer {\n    viewer {\n      workspace {\n        name\n      }\n      channel {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  query SocketViewer {\n    viewer {\n      workspace {\n        name\n      }\n      channel {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SocketRename($id: ID!, $name: String) {\n    updateContact(id: $id, input: { name: $name }) {\n      contact {\n        id\n        name\n      }\n      userErrors {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SocketRename($id: ID!, $name: String) {\n    updateContact(id: $id, input: { name: $name }) {\n      contact {\n        id\n        name\n      }\n      userErrors {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription SocketMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n      conversationId\n    }\n  }\n"): (typeof documents)["\n  subscription SocketMessageAdded($conversationId: ID) {\n    messageAdded(conversationId: $conversationId) {\n      id\n      body\n      conversationId\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SocketTooDeep {\n    conversations {\n      edges {\n        node {\n          messages {\n            edges {\n              node {\n                conversation {\n                  messages {\n                    edges {\n                      node {\n                        conversation {\n                          id\n                        }\n                      }\n                    }\n                  }\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query SocketTooDeep {\n    conversations {\n      edges {\n        node {\n          messages {\n            edges {\n              node {\n                conversation {\n                  messages {\n                    edges {\n                      node {\n                        conversation {\n                          id\n                        }\n                      }\n                    }\n                  }\n                }\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ActivityReport($conversationId: ID!, $typing: Boolean!, $from: ID) {\n    reportActivity(conversationId: $conversationId, typing: $typing, from: $from) { reported userErrors { field message code } }\n  }\n"): (typeof documents)["\n  mutation ActivityReport($conversationId: ID!, $typing: Boolean!, $from: ID) {\n    reportActivity(conversationId: $conversationId, typing: $typing, from: $from) { reported userErrors { field message code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Contact($id: ID!) {\n    contact(id: $id) { id name email phoneNumber isGroup createdAt updatedAt }\n  }\n"): (typeof documents)["\n  query Contact($id: ID!) {\n    contact(id: $id) { id name email phoneNumber isGroup createdAt updatedAt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FindContact($email: String, $phone: String) {\n    findContact(email: $email, phone: $phone) { id name }\n  }\n"): (typeof documents)["\n  query FindContact($email: String, $phone: String) {\n    findContact(email: $email, phone: $phone) { id name }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Contacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { cursor node { id name } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query Contacts($first: Int, $after: String, $search: String) {\n    contacts(first: $first, after: $after, search: $search) {\n      edges { cursor node { id name } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateContact($input: CreateContactInput!) {\n    createContact(input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateContact($input: CreateContactInput!) {\n    createContact(input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateContact($id: ID!, $input: UpdateContactInput!) {\n    updateContact(id: $id, input: $input) {\n      contact { id name email phoneNumber }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id body placeholder isEncrypted status type silent mediaUrls\n        sender { type id name }\n        contact { id name }\n        conversation { id status }\n      }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation SendMessage($input: SendMessageInput!) {\n    sendMessage(input: $input) {\n      message {\n        id body placeholder isEncrypted status type silent mediaUrls\n        sender { type id name }\n        contact { id name }\n        conversation { id status }\n      }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Conversation($id: ID!) {\n    conversation(id: $id) {\n      id status closedAt\n      contact { id }\n      stateChanges { type at actor { type id name } }\n      messages(first: 2) { edges { node { id body } } pageInfo { hasNextPage endCursor } }\n    }\n  }\n"): (typeof documents)["\n  query Conversation($id: ID!) {\n    conversation(id: $id) {\n      id status closedAt\n      contact { id }\n      stateChanges { type at actor { type id name } }\n      messages(first: 2) { edges { node { id body } } pageInfo { hasNextPage endCursor } }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CloseConversation($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n"): (typeof documents)["\n  mutation CloseConversation($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ReopenConversation($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n"): (typeof documents)["\n  mutation ReopenConversation($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status stateChanges { type } } userErrors { field message code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Messages($search: String, $conversationId: ID, $first: Int) {\n    messages(search: $search, conversationId: $conversationId, first: $first) {\n      edges { node { id body placeholder isEncrypted } }\n      pageInfo { hasNextPage }\n    }\n  }\n"): (typeof documents)["\n  query Messages($search: String, $conversationId: ID, $first: Int) {\n    messages(search: $search, conversationId: $conversationId, first: $first) {\n      edges { node { id body placeholder isEncrypted } }\n      pageInfo { hasNextPage }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Conversations($status: ConversationStatus) {\n    conversations(status: $status) { edges { node { id status } } }\n  }\n"): (typeof documents)["\n  query Conversations($status: ConversationStatus) {\n    conversations(status: $status) { edges { node { id status } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Templates {\n    templates { edges { node { id name language category status body parameterCount } } }\n  }\n"): (typeof documents)["\n  query Templates {\n    templates { edges { node { id name language category status body parameterCount } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { id assignee { id name email } stateChanges { type actor { type id } } }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxAssign($id: ID!, $userId: ID) {\n    assignConversation(id: $id, userId: $userId) {\n      conversation { id assignee { id name email } stateChanges { type actor { type id } } }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxRead($id: ID!, $throughMessageId: ID) {\n    markConversationRead(id: $id, throughMessageId: $throughMessageId) {\n      conversation { id lastReadAt unreadCount }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxRead($id: ID!, $throughMessageId: ID) {\n    markConversationRead(id: $id, throughMessageId: $throughMessageId) {\n      conversation { id lastReadAt unreadCount }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxLabels($id: ID!, $add: [String!], $remove: [String!]) {\n    updateConversationLabels(id: $id, add: $add, remove: $remove) {\n      conversation { id labels }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxLabels($id: ID!, $add: [String!], $remove: [String!]) {\n    updateConversationLabels(id: $id, add: $add, remove: $remove) {\n      conversation { id labels }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxPage($first: Int, $after: String, $assigneeId: ID, $unassigned: Boolean, $unread: Boolean, $label: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, assigneeId: $assigneeId, unassigned: $unassigned, unread: $unread, label: $label, search: $search, sort: $sort) {\n      edges { node { id labels unreadCount lastReadAt assignee { id } lastMessage { id body direction } contact { id name } } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query InboxPage($first: Int, $after: String, $assigneeId: ID, $unassigned: Boolean, $unread: Boolean, $label: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, assigneeId: $assigneeId, unassigned: $unassigned, unread: $unread, label: $label, search: $search, sort: $sort) {\n      edges { node { id labels unreadCount lastReadAt assignee { id } lastMessage { id body direction } contact { id name } } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxUsers($first: Int, $after: String) {\n    users(first: $first, after: $after) { edges { node { id name email } } pageInfo { hasNextPage endCursor } }\n  }\n"): (typeof documents)["\n  query InboxUsers($first: Int, $after: String) {\n    users(first: $first, after: $after) { edges { node { id name email } } pageInfo { hasNextPage endCursor } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxSearchPage($first: Int, $after: String, $last: Int, $before: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, last: $last, before: $before, search: $search, sort: $sort) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"): (typeof documents)["\n  query InboxSearchPage($first: Int, $after: String, $last: Int, $before: String, $search: String, $sort: ConversationSort) {\n    conversations(first: $first, after: $after, last: $last, before: $before, search: $search, sort: $sort) {\n      edges { cursor node { id } }\n      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxConversation($id: ID!) {\n    conversation(id: $id) {\n      id channelId stateChanges { type }\n      messages(first: 10) { edges { node { id } } }\n    }\n    messages(conversationId: $id, first: 10) { edges { node { id } } }\n  }\n"): (typeof documents)["\n  query InboxConversation($id: ID!) {\n    conversation(id: $id) {\n      id channelId stateChanges { type }\n      messages(first: 10) { edges { node { id } } }\n    }\n    messages(conversationId: $id, first: 10) { edges { node { id } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxChannels {\n    conversations(first: 50) { edges { node { id channelId } } }\n  }\n"): (typeof documents)["\n  query InboxChannels {\n    conversations(first: 50) { edges { node { id channelId } } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id } } } userErrors { field code } }\n  }\n"): (typeof documents)["\n  mutation InboxClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id } } } userErrors { field code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxReopen($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status } userErrors { field code } }\n  }\n"): (typeof documents)["\n  mutation InboxReopen($id: ID!) {\n    reopenConversation(id: $id) { conversation { id status } userErrors { field code } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query InboxRefetch($id: ID!, $ids: [ID!]!) {\n    node(id: $id) { __typename id ... on Conversation { channelId status } }\n    nodes(ids: $ids) { __typename id }\n  }\n"): (typeof documents)["\n  query InboxRefetch($id: ID!, $ids: [ID!]!) {\n    node(id: $id) { __typename id ... on Conversation { channelId status } }\n    nodes(ids: $ids) { __typename id }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxSendOn($contactId: ID!, $channelId: ID) {\n    sendMessage(input: { to: { contactId: $contactId }, type: text, message: \"which channel?\", channelId: $channelId }) {\n      message { id conversationId }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxSendOn($contactId: ID!, $channelId: ID) {\n    sendMessage(input: { to: { contactId: $contactId }, type: text, message: \"which channel?\", channelId: $channelId }) {\n      message { id conversationId }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation InboxCreateContactOn($phone: String!, $channelId: ID) {\n    createContact(input: { name: \"Linked\", phone: $phone, channelId: $channelId }) {\n      contact { id }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation InboxCreateContactOn($phone: String!, $channelId: ID) {\n    createContact(input: { name: \"Linked\", phone: $phone, channelId: $channelId }) {\n      contact { id }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation IdempotentSend($input: SendMessageInput!) {\n      sendMessage(input: $input) { message { id body conversation { id } } userErrors { field message code } }\n    }\n  "): (typeof documents)["\n    mutation IdempotentSend($input: SendMessageInput!) {\n      sendMessage(input: $input) { message { id body conversation { id } } userErrors { field message code } }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation IdempotentCreateContact($input: CreateContactInput!) {\n      createContact(input: $input) { contact { id email } userErrors { field message } }\n    }\n  "): (typeof documents)["\n    mutation IdempotentCreateContact($input: CreateContactInput!) {\n      createContact(input: $input) { contact { id email } userErrors { field message } }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n      mutation IdempotentSendReplay($input: SendMessageInput!) {\n        sendMessage(input: $input) { message { id body } userErrors { field message } }\n      }\n    "): (typeof documents)["\n      mutation IdempotentSendReplay($input: SendMessageInput!) {\n        sendMessage(input: $input) { message { id body } userErrors { field message } }\n      }\n    "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) {\n      session { id token user { id name email } scopes channelIds origins expiresAt createdAt }\n      userErrors { field message code }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateSession($input: CreateSessionInput!) {\n    createSession(input: $input) {\n      session { id token user { id name email } scopes channelIds origins expiresAt createdAt }\n      userErrors { field message code }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription StreamMessageAdded {\n    messageAdded { id body sender { type id name } }\n  }\n"): (typeof documents)["\n  subscription StreamMessageAdded {\n    messageAdded { id body sender { type id name } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription StreamConversationUpdated {\n    conversationUpdated { id status }\n  }\n"): (typeof documents)["\n  subscription StreamConversationUpdated {\n    conversationUpdated { id status }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SessionViewer {\n    viewer { channel { id } }\n  }\n"): (typeof documents)["\n  query SessionViewer {\n    viewer { channel { id } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionSend($input: SendMessageInput!) {\n    sendMessage(input: $input) { message { id sender { type id name } } userErrors { field message } }\n  }\n"): (typeof documents)["\n  mutation SessionSend($input: SendMessageInput!) {\n    sendMessage(input: $input) { message { id sender { type id name } } userErrors { field message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id } userErrors { field message } }\n  }\n"): (typeof documents)["\n  mutation SessionCreateContact($input: CreateContactInput!) {\n    createContact(input: $input) { contact { id } userErrors { field message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SessionClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id name } } } userErrors { field message } }\n  }\n"): (typeof documents)["\n  mutation SessionClose($id: ID!) {\n    closeConversation(id: $id) { conversation { id status stateChanges { type actor { type id name } } } userErrors { field message } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription RefreshMessageAdded {\n    messageAdded { id body }\n  }\n"): (typeof documents)["\n  subscription RefreshMessageAdded {\n    messageAdded { id body }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;