import { useCallback, useEffect, useState } from 'react';
import { errorText, useGateway, useSubscription } from './gateway.js';
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
 * it in place; one the list does not hold yet (a new conversation) reloads the list. A
 * conversation that stops matching the filter (read, in the unread view) stays until the
 * filter changes, so it does not vanish under the agent's cursor.
 */
export function useConversations(filter: Filter) {
  const { connection, agent } = useGateway();
  const [byId, setById] = useState(() => new Map<string, Conversation>());
  const [order, setOrder] = useState<string[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);

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

  const remember = (conversations: Conversation[]) =>
    setById((known) => {
      const copy = new Map(known);
      for (const conversation of conversations) copy.set(conversation.id, conversation);
      return copy;
    });

  useEffect(() => {
    let current = true;
    setLoading(true);
    connection.execute(ConversationsQuery, variables(null)).then(
      ({ conversations }) => {
        if (!current) return;
        const nodes = conversations?.edges.map((edge) => edge.node) ?? [];
        remember(nodes);
        setOrder(nodes.map((node) => node.id));
        setNext(conversations?.pageInfo.hasNextPage ? conversations.pageInfo.endCursor ?? null : null);
        setError('');
        setLoading(false);
      },
      (failure: unknown) => current && (setError(errorText(failure)), setLoading(false)),
    );
    return () => {
      current = false;
    };
  }, [connection, variables, reloads]);

  const loadMore = () => {
    if (!next) return;
    connection.execute(ConversationsQuery, variables(next)).then(({ conversations }) => {
      const nodes = conversations?.edges.map((edge) => edge.node) ?? [];
      remember(nodes);
      setOrder((ids) => [...ids, ...nodes.map((node) => node.id).filter((id) => !ids.includes(id))]);
      setNext(conversations?.pageInfo.hasNextPage ? conversations.pageInfo.endCursor ?? null : null);
    }, (failure: unknown) => setError(errorText(failure)));
  };

  /** A conversation as a mutation or the subscription answered it. */
  const update = useCallback((conversation: Conversation) => remember([conversation]), []);

  useSubscription(ConversationUpdatedSubscription, {}, ({ conversationUpdated }) => {
    update(conversationUpdated);
    if (!order.includes(conversationUpdated.id)) setReloads((n) => n + 1);
  });

  // Newest activity first, also after live changes.
  const conversations = order
    .map((id) => byId.get(id))
    .filter((conversation): conversation is Conversation => Boolean(conversation))
    .sort((a, b) => (b.lastMessageAt ?? '').localeCompare(a.lastMessageAt ?? ''));

  return { conversations, byId, loading, error, hasMore: Boolean(next), loadMore, update };
}
