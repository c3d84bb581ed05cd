/** The chats the member can read (pinned first), with search, a new chat, the compare view and bookmarks. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { Link, navigate } from '../../router';
import { useCan } from '../../session';
import { ErrorNote, PinnedMark } from '../../ui';
import { ProjectList } from './ProjectList';

export function ChatList({ activeId }: { activeId: string | null }) {
  const [search, setSearch] = useState('');
  const [archived, setArchived] = useState(false);
  const chats = useQuery({ queryKey: ['playground', 'chats', search, archived], queryFn: () => playground.chats(search, archived) });
  const bookmarks = useQuery({ queryKey: ['playground', 'bookmarks'], queryFn: playground.bookmarks });
  const can = useCan();
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: () => playground.createChat({ model: 'sim-chat' }),
    onSuccess: (chat) => { void client.invalidateQueries({ queryKey: ['playground'] }); navigate(`/playground/${chat.id}`); },
  });
  return (
    <nav className="chat-list" aria-label="Chats">
      {can('playground.use') && (
        <div className="row">
          <button type="button" onClick={() => create.mutate()}>New chat</button>
          <Link to="/playground/compare">Compare</Link>
        </div>
      )}
      <ProjectList />
      <input type="search" aria-label="Search chats" placeholder="Search chats" value={search} onChange={(e) => setSearch(e.target.value)} />
      <button type="button" className="link" aria-pressed={archived} onClick={() => setArchived(!archived)}>Archived</button>
      {archived && <h2>Archived chats</h2>}
      <ErrorNote error={chats.error ?? create.error} />
      <ul>
        {chats.data?.data.map((c) => (
          <li key={c.id}>
            <Link to={`/playground/${c.id}`} aria-current={c.id === activeId ? 'page' : undefined}>
              {c.bookmarked && <><PinnedMark />{' '}</>}{c.title}
              {c.access !== 'owner' && <span className="badge">shared</span>}
            </Link>
          </li>
        ))}
        {chats.data?.data.length === 0 && <li className="empty">{archived ? 'No archived chats.' : 'No chats.'}</li>}
      </ul>
      {(bookmarks.data?.data.length ?? 0) > 0 && (
        <section aria-label="Bookmarks">
          <h2>Bookmarks</h2>
          <ul>
            {bookmarks.data!.data.map((b) => (
              <li key={`${b.chat_id}-${b.message_id}`}><Link to={`/playground/${b.chat_id}`}>{b.message_id ? b.excerpt.slice(0, 50) || b.chat_title : b.chat_title}</Link></li>
            ))}
          </ul>
        </section>
      )}
    </nav>
  );
}
