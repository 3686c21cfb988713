import { useEffect, useState } from 'react';
import type { Conversation, Filter } from './conversations.js';
import { messageText } from './Thread.js';

const VIEWS: { view: Filter['view']; title: string }[] = [
  { view: 'all', title: 'All' },
  { view: 'unread', title: 'Unread' },
  { view: 'mine', title: 'Assigned to me' },
  { view: 'unassigned', title: 'Unassigned' },
];

/** The view buttons, and the label and search fields (applied a moment after typing stops). */
export function Filters({ filter, onChange }: { filter: Filter; onChange(filter: Filter): void }) {
  const [label, setLabel] = useState(filter.label);
  const [search, setSearch] = useState(filter.search);
  useEffect(() => {
    if (label === filter.label && search === filter.search) return;
    const timer = setTimeout(() => onChange({ ...filter, label, search }), 300);
    return () => clearTimeout(timer);
  }, [label, search, filter, onChange]);

  return (
    <div className="filters">
      <div className="views" role="group" aria-label="Show">
        {VIEWS.map(({ view, title }) => (
          <button key={view} type="button" aria-pressed={filter.view === view} onClick={() => onChange({ ...filter, view })}>
            {title}
          </button>
        ))}
      </div>
      <input type="search" placeholder="Search" aria-label="Search" value={search} onChange={(event) => setSearch(event.target.value)} />
      <input placeholder="Label" aria-label="Label" value={label} onChange={(event) => setLabel(event.target.value)} />
    </div>
  );
}

interface ListProps {
  conversations: Conversation[];
  selectedId: string | null;
  onSelect(id: string): void;
  loading: boolean;
  hasMore: boolean;
  onMore(): void;
}

/** One line per conversation: contact, unread badge, assignee, labels and the last message. */
export function ConversationList({ conversations, selectedId, onSelect, loading, hasMore, onMore }: ListProps) {
  if (!loading && conversations.length === 0) return <p className="empty">No conversations.</p>;
  return (
    <ul className="conversations" data-testid="conversations" aria-busy={loading}>
      {conversations.map((conversation) => (
        <li key={conversation.id} data-testid="conversation" data-id={conversation.id} aria-current={conversation.id === selectedId}>
          <button type="button" onClick={() => onSelect(conversation.id)}>
            <span className="line">
              <strong className="contact">{conversation.contact.name}</strong>
              {conversation.unreadCount > 0 && (
                <span className="badge" data-testid="unread" aria-label={`${conversation.unreadCount} unread`}>
                  {conversation.unreadCount}
                </span>
              )}
            </span>
            <span className="line meta">
              <span data-testid="assignee">{conversation.assignee ? `→ ${conversation.assignee.name}` : 'Unassigned'}</span>
              {conversation.labels.map((label) => (
                <span key={label} className="label">
                  {label}
                </span>
              ))}
            </span>
            <span className="preview" data-testid="last-message">
              {conversation.lastMessage ? messageText(conversation.lastMessage) : ''}
            </span>
          </button>
        </li>
      ))}
      {hasMore && (
        <li>
          <button type="button" className="more" onClick={onMore}>
            More conversations
          </button>
        </li>
      )}
    </ul>
  );
}
