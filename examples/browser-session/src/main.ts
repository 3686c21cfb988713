import { GatewayConnection, GatewayError, type ConnectionState, type MintedSession } from './connection.js';
import type { InboxConversationsQuery, InboxMessagesQuery } from './gql/graphql.js';
import { ContactsQuery, ConversationsQuery, MessageAddedSubscription, MessagesQuery, SendMessageMutation, ViewerQuery } from './operations.js';

// An agent inbox: the conversations and contacts of the channel, one conversation's messages, a
// composer that sends as the signed-in agent, and new messages as they arrive. The page holds a
// session token in memory only; its backend (server.ts) mints it and mints the next one.

type Conversation = NonNullable<InboxConversationsQuery['conversations']>['edges'][number]['node'];
type Message = NonNullable<InboxMessagesQuery['messages']>['edges'][number]['node'];

const app = document.querySelector<HTMLDivElement>('#app')!;

/** Builds an element: `h('li', { class: 'x', dataset: { testid: 'y' } }, 'text', child)`. */
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Partial<Omit<HTMLElementTagNameMap[K], 'dataset'>> & { dataset?: Record<string, string>; class?: string } = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  const { dataset, class: className, ...rest } = props;
  Object.assign(element, rest);
  if (className) element.className = className;
  Object.assign(element.dataset, dataset);
  element.append(...children);
  return element;
}

async function backend<T>(route: string, body: unknown = {}): Promise<T> {
  const response = await fetch(route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as T & { message?: string };
  if (!response.ok) throw new Error(answer.message ?? `HTTP ${response.status}`);
  return answer;
}

/** The stand-in sign-in form (server.ts's `/api/login`: where a real login goes). */
function showLogin(message?: string): void {
  const email = h('input', { type: 'email', name: 'email', placeholder: 'agent@demo.localhost', required: true, value: 'agent@demo.localhost' });
  const error = h('p', { class: 'error', dataset: { testid: 'login-error' } }, message ?? '');
  const form = h('form', {}, h('label', {}, 'Your email'), email, h('button', { type: 'submit' }, 'Sign in'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    backend('/api/login', { email: email.value })
      .then(() => startInbox())
      .catch((failure: unknown) => (error.textContent = String(failure instanceof Error ? failure.message : failure)));
  });
  app.replaceChildren(h('div', { class: 'login' }, h('h1', {}, 'Agent inbox'), form, error));
}

function describe(state: ConnectionState): string {
  switch (state.kind) {
    case 'connecting':
      return 'Connecting…';
    case 'connected':
      return 'Live';
    case 'reconnecting':
      return 'Reconnecting…';
    case 'revoked':
      return 'Session revoked';
    case 'signed-out':
      return 'Signed out';
  }
}

async function startInbox(): Promise<void> {
  const status = h('span', { class: 'status', dataset: { testid: 'connection' } }, 'Connecting…');
  const expiry = h('span', { class: 'status', dataset: { testid: 'expiry' } });
  const agent = h('span', { dataset: { testid: 'agent' } });
  const signOut = h('button', { type: 'button' }, 'Sign out');
  const banner = h('div', { class: 'banner', hidden: true, dataset: { testid: 'ended' } });
  const conversationList = h('ul', { dataset: { testid: 'conversations' } });
  const contactList = h('ul', { dataset: { testid: 'contacts' } });
  const messageList = h('div', { dataset: { testid: 'messages' } });
  const liveList = h('ul', { dataset: { testid: 'live' } });
  const title = h('h2', {}, 'Pick a conversation');
  const text = h('input', { name: 'message', placeholder: 'Write a reply…', disabled: true });
  const sendButton = h('button', { type: 'submit', disabled: true }, 'Send');
  const sendError = h('p', { class: 'error', dataset: { testid: 'send-error' } });
  const composer = h('form', {}, text, sendButton);
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'Agent inbox'), agent, status, expiry, signOut),
    banner,
    h(
      'main',
      {},
      h('section', {}, h('h2', {}, 'Conversations'), conversationList, h('h2', {}, 'Contacts'), contactList),
      h('section', {}, title, messageList, composer, sendError),
      h('section', {}, h('h2', {}, 'Live'), liveList),
    ),
  );

  let refreshes = -1;
  let connections = 0;
  let selected: Conversation | undefined;
  const conversations = new Map<string, Conversation>();
  const connection = new GatewayConnection({
    mint: () => backend<MintedSession>('/api/session'),
    onSession(session) {
      refreshes += 1;
      agent.textContent = `${session.user.name} <${session.user.email}>`;
      expiry.textContent = `Session until ${new Date(session.expiresAt).toLocaleTimeString()}${refreshes ? ` (refreshed ${refreshes}×)` : ''}`;
      expiry.dataset.refreshes = String(refreshes);
    },
    onState(state) {
      status.textContent = describe(state);
      status.dataset.state = state.kind;
      if (state.kind === 'connected') status.dataset.connections = String((connections += 1));
      if (state.kind === 'revoked' || state.kind === 'signed-out') {
        banner.hidden = false;
        banner.replaceChildren(`${describe(state)}: ${state.reason} `, h('button', { type: 'button', onclick: () => showLogin() }, 'Sign in again'));
        text.disabled = sendButton.disabled = true;
      }
    },
  });

  const renderMessage = (message: Message) =>
    h(
      'div',
      { class: `message ${message.direction}`, dataset: { testid: 'message', id: message.id, senderType: message.sender.type } },
      h('div', {}, message.body ?? message.placeholder ?? ''),
      h('div', { class: 'meta' }, `${message.sender.name ?? message.sender.type} · ${message.status} · ${new Date(message.createdAt).toLocaleTimeString()}`),
    );

  const renderConversations = () => {
    const sorted = [...conversations.values()].sort((a, b) => (b.lastMessageAt ?? '').localeCompare(a.lastMessageAt ?? ''));
    conversationList.replaceChildren(
      ...sorted.map((conversation) =>
        h(
          'li',
          { class: conversation.id === selected?.id ? 'selected' : '' },
          h(
            'button',
            { type: 'button', class: 'link', onclick: () => void open(conversation) },
            `${conversation.contact.name} (${conversation.status})`,
          ),
        ),
      ),
    );
  };

  const open = async (conversation: Conversation) => {
    selected = conversation;
    renderConversations();
    title.textContent = conversation.contact.name;
    text.disabled = sendButton.disabled = false;
    sendError.textContent = '';
    const { messages } = await connection.execute(MessagesQuery, { conversationId: conversation.id, first: 50 }).catch((failure: unknown) => {
      sendError.textContent = `The messages could not be loaded: ${failure instanceof Error ? failure.message : String(failure)}`;
      return { messages: null };
    });
    if (selected !== conversation) return;
    messageList.replaceChildren(...(messages?.edges ?? []).map((edge) => edge.node).reverse().map(renderMessage));
  };

  composer.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!selected || !text.value.trim()) return;
    sendError.textContent = '';
    // The session sends as its user: no `from`, and the gateway refuses one naming anyone else.
    connection
      .execute(SendMessageMutation, { input: { contact: { contactId: selected.contact.id }, message: text.value, idempotencyKey: crypto.randomUUID() } })
      .then(({ sendMessage }) => {
        if (sendMessage?.userErrors.length) sendError.textContent = sendMessage.userErrors.map((error) => error.message).join(' ');
        else text.value = '';
      })
      .catch((failure: unknown) => (sendError.textContent = failure instanceof GatewayError && failure.code === 'FORBIDDEN' ? 'This session may not send.' : String(failure)));
  });

  signOut.addEventListener('click', () => {
    connection.dispose();
    void backend('/api/logout').finally(() => showLogin());
  });

  try {
    await connection.start();
  } catch (failure) {
    return showLogin(failure instanceof Error ? failure.message : String(failure));
  }

  // New messages of the channel: into the live feed, the open conversation and the list.
  connection.subscribe(MessageAddedSubscription, {}, ({ messageAdded: message }) => {
    liveList.prepend(h('li', { dataset: { testid: 'live-message', id: message.id } }, `${message.sender.name ?? message.sender.type} → ${message.contact.name}: ${message.body ?? message.placeholder ?? ''}`));
    if (message.conversationId === selected?.id) messageList.append(renderMessage(message));
    const known = conversations.get(message.conversationId);
    conversations.set(message.conversationId, { id: message.conversationId, status: known?.status ?? 'open', lastMessageAt: message.createdAt, contact: message.contact });
    renderConversations();
  });

  const [{ viewer }, { conversations: page }, { contacts }] = await Promise.all([
    connection.execute(ViewerQuery, {}),
    connection.execute(ConversationsQuery, { first: 25 }),
    connection.execute(ContactsQuery, { first: 25 }),
  ]);
  document.title = `Agent inbox · ${viewer?.channel.name ?? ''}`;
  for (const { node } of page?.edges ?? []) if (!conversations.has(node.id)) conversations.set(node.id, node);
  renderConversations();
  contactList.replaceChildren(...(contacts?.edges ?? []).map(({ node }) => h('li', {}, `${node.name} ${node.email ?? node.phoneNumber ?? ''}`)));
  app.dataset.ready = 'true';
}

// Signed in already (the backend's cookie) when a session can be minted; otherwise the form.
void startInbox();
