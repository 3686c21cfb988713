import { useState, type FormEvent } from 'react';
import type { ConnectionState } from '../../browser-session/src/connection.js';
import { ConversationList, Filters } from './ConversationList.js';
import { useConversations, type Filter } from './conversations.js';
import { backend, errorText, GatewayProvider, useAgent, useSession } from './gateway.js';
import { Thread } from './Thread.js';

const STATES: Record<ConnectionState['kind'], string> = {
  connecting: 'Connecting…',
  connected: 'Live',
  reconnecting: 'Reconnecting…',
  revoked: 'Session revoked',
  'signed-out': 'Signed out',
};

/** Signs the agent in through the backend, then shows the inbox on a live connection. */
export function App() {
  const [attempt, setAttempt] = useState(0);
  const { session, state } = useSession(attempt);
  const restart = () => setAttempt((n) => n + 1);

  if (session.kind === 'starting') return <p className="empty">Connecting…</p>;
  if (session.kind === 'signed-out') return <SignIn message={session.message} onSignedIn={restart} />;
  const ended = state.kind === 'revoked' || state.kind === 'signed-out';
  return (
    <GatewayProvider client={session.client} agent={session.agent}>
      <header className="top">
        <h1>Inbox</h1>
        <span data-testid="agent">{session.agent.name}</span>
        <span className="meta" data-testid="connection" data-state={state.kind}>
          {STATES[state.kind]}
        </span>
        <button type="button" onClick={() => void backend('/api/logout').finally(restart)}>
          Sign out
        </button>
      </header>
      {ended && (
        <div className="banner" role="alert">
          {STATES[state.kind]}: {state.reason}{' '}
          <button type="button" onClick={restart}>
            Sign in again
          </button>
        </div>
      )}
      <Inbox />
    </GatewayProvider>
  );
}

function Inbox() {
  const agent = useAgent();
  const [filter, setFilter] = useState<Filter>({ view: 'all', label: '', search: '' });
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const { conversations, byId, loading, error, hasMore, loadMore, update } = useConversations(filter);
  const selected = selectedId ? byId.get(selectedId) : undefined;

  return (
    <main className="inbox" data-ready={!loading} data-agent={agent.id}>
      <aside>
        <Filters filter={filter} onChange={setFilter} />
        {error && <p className="error">{error}</p>}
        <ConversationList conversations={conversations} selectedId={selectedId} onSelect={setSelectedId} loading={loading} hasMore={hasMore} onMore={loadMore} />
      </aside>
      {selected ? <Thread key={selected.id} conversation={selected} onChange={update} /> : <p className="empty">Pick a conversation.</p>}
    </main>
  );
}

/** The stand-in sign-in of the backend (`/api/login`): where a real login goes. */
function SignIn({ message, onSignedIn }: { message: string | undefined; onSignedIn(): void }) {
  const [email, setEmail] = useState('agent@demo.localhost');
  const [error, setError] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    backend('/api/login', { email }).then(onSignedIn, (failure: unknown) => setError(errorText(failure)));
  };
  return (
    <form className="sign-in" onSubmit={submit}>
      <h1>Inbox</h1>
      <label>
        Your email <input type="email" required value={email} onChange={(event) => setEmail(event.target.value)} />
      </label>
      <button type="submit">Sign in</button>
      {/* The first visit has nobody signed in: no need to say so. */}
      <p className="error">{error || (message === 'Sign in first.' ? '' : message)}</p>
    </form>
  );
}
