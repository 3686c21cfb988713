import { useCallback, useEffect, useMemo, useState } from 'react';
import { useClient, useQuery } from 'urql';
import { errorText, useAgent, useEvents } from './gateway.js';
import type { InboxConversationFragment } from './gql/graphql.js';
import { ConversationUpdatedSubscription, ConversationsQuery } from './operations.js';

export type Conversation = InboxConversationFragment;

/** Which conversations the list shows: one view and, optionally, a label and a search text. */
export interface Filter {
  view: 'all' | 'unread' | 'mine' | 'unassigned';
  label: string;
  search: string;
}

const PAGE = 25;

/**
 * The conversation list for `filter`, newest activity first, kept live: every change of a
 * conversation (a message, a read, an assignment) arrives on `conversationUpdated` and replaces
 * it in place; one the list does not hold yet (a new conversation) runs the list's query again.
 * The first page is urql's `useQuery` (the network each time: the list changes under the
 * subscription, which the document cache does not see), and urql runs it again when a mutation
 * answers with a conversation or a message. A conversation that stops matching the filter (read,
 * in the unread view) stays until the filter changes, so it does not vanish under the agent's cursor.
 */
export function useConversations(filter: Filter) {
  const agent = useAgent();
  const client = useClient();
  const [byId, setById] = useState(() => new Map<string, Conversation>());
  /** The ids listed, the filter they were listed for, the cursor of the next page and whether further pages were loaded. */
  const [listed, setListed] = useState<{ key: string; ids: string[]; next: string | null; more: boolean }>({ key: '', ids: [], next: null, more: false });
  const [moreError, setMoreError] = useState('');

  const variables = useCallback(
    (after: string | null) => ({
      first: PAGE,
      after,
      unread: filter.view === 'unread' ? true : null,
      assigneeId: filter.view === 'mine' ? agent.id : null,
      unassigned: filter.view === 'unassigned' ? true : null,
      label: filter.label.trim() || null,
      search: filter.search.trim() || null,
    }),
    [filter, agent.id],
  );
  const firstPage = useMemo(() => variables(null), [variables]);
  const key = JSON.stringify(firstPage);
  const [{ data, error }, runAgain] = useQuery({ query: ConversationsQuery, variables: firstPage, requestPolicy: 'network-only' });

  const remember = (conversations: Conversation[]) =>
    setById((known) => {
      const copy = new Map(known);
      for (const conversation of conversations) copy.set(conversation.id, conversation);
      return copy;
    });

  useEffect(() => {
    const page = data?.conversations;
    if (!page) return;
    const nodes = page.edges.map((edge) => edge.node);
    remember(nodes);
    // Run again for the same filter: what was listed stays (further pages, a conversation just read).
    const cursor = page.pageInfo.hasNextPage ? (page.pageInfo.endCursor ?? null) : null;
    setListed((shown) =>
      shown.key === key
        ? { ...shown, ids: [...new Set([...nodes.map((node) => node.id), ...shown.ids])], next: shown.more ? shown.next : cursor }
        : { key, ids: nodes.map((node) => node.id), next: cursor, more: false },
    );
    setMoreError('');
  }, [data]);

  const next = listed.key === key ? listed.next : null;
  const loadMore = () => {
    if (!next) return;
    void client
      .query(ConversationsQuery, variables(next), { requestPolicy: 'network-only' })
      .toPromise()
      .then(({ data: more, error: failure }) => {
        if (failure || !more?.conversations) return setMoreError(errorText(failure));
        const nodes = more.conversations.edges.map((edge) => edge.node);
        remember(nodes);
        const cursor = more.conversations.pageInfo.hasNextPage ? (more.conversations.pageInfo.endCursor ?? null) : null;
        setListed((shown) => (shown.key === key ? { ...shown, ids: [...new Set([...shown.ids, ...nodes.map((node) => node.id)])], next: cursor, more: true } : shown));
      });
  };

  /** A conversation as a mutation or the subscription answered it. */
  const update = useCallback((conversation: Conversation) => remember([conversation]), []);

  useEvents(ConversationUpdatedSubscription, {}, ({ conversationUpdated }) => {
    update(conversationUpdated);
    if (!listed.ids.includes(conversationUpdated.id)) runAgain({ requestPolicy: 'network-only' });
  });

  // Newest activity first, also after live changes.
  const ids = listed.key === key ? listed.ids : [];
  const conversations = ids
    .map((id) => byId.get(id))
    .filter((conversation): conversation is Conversation => Boolean(conversation))
    .sort((a, b) => (b.lastMessageAt ?? '').localeCompare(a.lastMessageAt ?? ''));

  const loading = listed.key !== key && !error;
  return { conversations, byId, loading, error: error ? errorText(error) : moreError, hasMore: Boolean(next), loadMore, update };
}
