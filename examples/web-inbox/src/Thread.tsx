import { useEffect, useLayoutEffect, useRef, useState, type FormEvent } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import type { Conversation } from './conversations.js';
import { errorText, useAgent, useEvents } from './gateway.js';
import type { InboxMessageFragment } from './gql/graphql.js';
import { AssignMutation, MarkReadMutation, MessageAddedSubscription, MessageUpdatedSubscription, SendReplyMutation, ThreadQuery } from './operations.js';

type Message = InboxMessageFragment;

const PAGE = 20;

/** What a message shows: its text, or the placeholder of an encrypted one. */
export function messageText(message: Pick<Message, 'body' | 'placeholder'>): string {
  return message.body ?? message.placeholder ?? '';
}

/** Delivery ticks of an outbound message, as WhatsApp shows them. */
const TICKS: Record<Message['status'], string> = { queued: '🕓', sent: '✓', delivered: '✓✓', read: '✓✓', failed: '!', received: '' };

/** Statuses only move forward; an older copy of a message (a late answer) never moves its ticks back. */
const RANK: Record<Message['status'], number> = { queued: 0, received: 0, sent: 1, delivered: 2, read: 3, failed: 4 };

/** Where to leave the scroll after the messages change. */
type Scroll = { to: 'bottom' } | { to: 'keep'; height: number; top: number } | null;

/** One conversation: its messages (newest at the bottom, older ones as the agent scrolls up), a reply box, assign and mark read. */
export function Thread({ conversation, onChange }: { conversation: Conversation; onChange(conversation: Conversation): void }) {
  const agent = useAgent();
  const client = useClient();
  const [messages, setMessages] = useState<Message[]>([]);
  /** The cursor of the page before the oldest shown; undefined until the first page came. */
  const [older, setOlder] = useState<string | null | undefined>(undefined);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [error, setError] = useState('');
  // The newest page (urql runs it again when a mutation answers with a message or this conversation).
  const [newest] = useQuery({ query: ThreadQuery, variables: { conversationId: conversation.id, first: PAGE }, requestPolicy: 'network-only' });
  const [, markReadMutation] = useMutation(MarkReadMutation);
  const [, assignMutation] = useMutation(AssignMutation);
  const loading = older === undefined || loadingOlder;
  const box = useRef<HTMLDivElement>(null);
  const scroll = useRef<Scroll>(null);
  const id = conversation.id;

  /** Adds messages (new or changed) by id, oldest first. */
  const merge = (incoming: Message[]) =>
    setMessages((shown) => {
      const byId = new Map(shown.map((message) => [message.id, message]));
      for (const message of incoming) {
        const known = byId.get(message.id);
        byId.set(message.id, known && RANK[known.status] > RANK[message.status] ? { ...message, status: known.status, failureReason: known.failureReason } : message);
      }
      return [...byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    });

  const markRead = () =>
    markReadMutation({ id }).then(({ data, error: failure }) =>
      failure ? setError(errorText(failure)) : data?.markConversationRead?.conversation && onChange(data.markConversationRead.conversation),
    );

  // Opening: the newest page, scrolled to the bottom, and the conversation marked read.
  useEffect(() => {
    const page = newest.data?.messages;
    if (newest.error) setError(errorText(newest.error));
    if (!page) return;
    // The first time only: a later run of the query (after a mutation) adds what is new, and leaves the scroll.
    if (older === undefined) {
      scroll.current = { to: 'bottom' };
      setOlder(page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? null) : null);
    }
    // Merged: a message that arrived on the subscription meanwhile stays.
    merge(page.edges.map((edge) => edge.node));
  }, [newest.data, newest.error]);

  useEffect(() => {
    if (conversation.unreadCount > 0) void markRead();
    // Once per conversation opened.
  }, [id]);

  // Messages are listed newest first, so the page before the oldest shown is the next one (`after`).
  const loadOlder = () => {
    const element = box.current;
    if (!older || loading || !element) return;
    setLoadingOlder(true);
    void client
      .query(ThreadQuery, { conversationId: id, first: PAGE, after: older }, { requestPolicy: 'network-only' })
      .toPromise()
      .then(({ data, error: failure }) => {
        setLoadingOlder(false);
        if (failure || !data?.messages) return setError(errorText(failure));
        scroll.current = { to: 'keep', height: element.scrollHeight, top: element.scrollTop };
        merge(data.messages.edges.map((edge) => edge.node));
        setOlder(data.messages.pageInfo.hasNextPage ? (data.messages.pageInfo.endCursor ?? null) : null);
      });
  };

  useLayoutEffect(() => {
    const element = box.current;
    const wanted = scroll.current;
    if (!element || !wanted) return;
    scroll.current = null;
    // Older messages went in above: keep the ones the agent was reading where they were.
    element.scrollTop = wanted.to === 'bottom' ? element.scrollHeight : wanted.top + element.scrollHeight - wanted.height;
  }, [messages]);

  const nearBottom = () => {
    const element = box.current;
    return !element || element.scrollHeight - element.scrollTop - element.clientHeight < 80;
  };

  useEvents(MessageAddedSubscription, { conversationId: id }, ({ messageAdded }) => {
    if (nearBottom()) scroll.current = { to: 'bottom' };
    merge([messageAdded]);
  });
  // A status changed: the ticks move.
  useEvents(MessageUpdatedSubscription, { conversationId: id }, ({ messageUpdated }) => merge([messageUpdated]));

  const assignToMe = () =>
    assignMutation({ id, userId: agent.id }).then(({ data, error: failure }) =>
      failure ? setError(errorText(failure)) : data?.assignConversation?.conversation && onChange(data.assignConversation.conversation),
    );

  return (
    <section className="thread" data-testid="thread">
      <header>
        <h2>{conversation.contact.name}</h2>
        <span className="meta" data-testid="thread-assignee">
          {conversation.assignee ? `Assigned to ${conversation.assignee.name}` : 'Unassigned'}
        </span>
        <button type="button" onClick={() => void assignToMe()} disabled={conversation.assignee?.id === agent.id}>
          Assign to me
        </button>
        <button type="button" onClick={() => void markRead()} disabled={conversation.unreadCount === 0}>
          Mark read
        </button>
      </header>
      <div
        className="messages"
        data-testid="messages"
        ref={box}
        onScroll={(event) => event.currentTarget.scrollTop < 40 && loadOlder()}
      >
        <p className="meta edge" data-testid="history">
          {loading ? 'Loading…' : older ? 'Scroll up for older messages' : 'Start of the conversation'}
        </p>
        {messages.map((message) => (
          <MessageItem key={message.id} message={message} />
        ))}
      </div>
      {error && <p className="error">{error}</p>}
      <ReplyBox conversation={conversation} onSent={(message) => ((scroll.current = { to: 'bottom' }), merge([message]))} />
    </section>
  );
}

function MessageItem({ message }: { message: Message }) {
  const outbound = message.direction === 'outbound';
  return (
    <div className={`message ${message.direction}`} data-testid="message" data-id={message.id} data-status={message.status} data-sender-type={message.sender.type}>
      <div className="body">{messageText(message)}</div>
      <div className="meta">
        {message.sender.name ?? message.sender.type} · {new Date(message.createdAt).toLocaleTimeString()}
        {outbound && (
          <span className={`tick ${message.status}`} data-testid="tick" title={message.failureReason ?? message.status}>
            {TICKS[message.status]}
          </span>
        )}
      </div>
    </div>
  );
}

/** Sends as the signed-in agent: a session's message is recorded as its user's (no `from`). */
function ReplyBox({ conversation, onSent }: { conversation: Conversation; onSent(message: Message): void }) {
  const [{ fetching: sending }, sendReply] = useMutation(SendReplyMutation);
  const [text, setText] = useState('');
  const [error, setError] = useState('');

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    if (sending) return;
    setError('');
    void sendReply({ input: { contact: { contactId: conversation.contact.id }, message: text, idempotencyKey: crypto.randomUUID() } }).then(({ data, error: failure }) => {
      const sendMessage = data?.sendMessage;
      if (failure) return setError(errorText(failure));
      if (sendMessage?.userErrors.length) return setError(sendMessage.userErrors.map((userError) => userError.message).join(' '));
      if (sendMessage?.message) onSent(sendMessage.message);
      setText('');
    });
  };

  return (
    <form className="reply" onSubmit={send}>
      <textarea
        placeholder="Write a reply…"
        aria-label="Reply"
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => event.key === 'Enter' && !event.shiftKey && send(event)}
      />
      <button type="submit" disabled={sending || !text.trim()}>
        Send
      </button>
      {error && <p className="error" data-testid="send-error">{error}</p>}
    </form>
  );
}
