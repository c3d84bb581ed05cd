/** The chat's title with Rename, Export (Markdown or JSON) and Archive / Restore (the owner's). */
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { playground, type ChatDetail } from '../../playground-api';
import { navigate } from '../../router';
import { ErrorNote } from '../../ui';
import { download } from './chat-export';

export function ChatTitle({ chat, canRename }: { chat: ChatDetail; canRename: boolean }) {
  const client = useQueryClient();
  const [title, setTitle] = useState<string | null>(null);
  const rename = useMutation({
    mutationFn: (t: string) => playground.updateChat(chat.id, { title: t }),
    onSuccess: () => { setTitle(null); void client.invalidateQueries({ queryKey: ['playground'] }); },
  });
  if (title === null) {
    return (
      <>
        <h1>{chat.title}</h1>
        {canRename && <button type="button" className="secondary" onClick={() => setTitle(chat.title)}>Rename</button>}
      </>
    );
  }
  return (
    <>
      <h1 className="sr-only">{chat.title}</h1>
      <form className="rename row" onSubmit={(e) => { e.preventDefault(); rename.mutate(title); }}>
        <input aria-label="Chat title" value={title} maxLength={200} autoFocus onChange={(e) => setTitle(e.target.value)}
          onKeyDown={(e) => { if (e.key === 'Escape') setTitle(null); }} />
        <button type="submit" disabled={!title.trim() || rename.isPending}>Save title</button>
        <button type="button" className="secondary" onClick={() => setTitle(null)}>Cancel</button>
        <ErrorNote error={rename.error} />
      </form>
    </>
  );
}

export function ChatActions({ chat }: { chat: ChatDetail }) {
  const client = useQueryClient();
  const archive = useMutation({
    mutationFn: (archived: boolean) => playground.updateChat(chat.id, { archived }),
    onSuccess: (_, archived) => { void client.invalidateQueries({ queryKey: ['playground'] }); if (archived) navigate('/playground'); },
  });
  return (
    <>
      <button type="button" className="secondary" onClick={() => download(chat, 'md')}>Export Markdown</button>
      <button type="button" className="secondary" onClick={() => download(chat, 'json')}>Export JSON</button>
      {chat.access === 'owner' && (
        <button type="button" className="secondary" disabled={archive.isPending} onClick={() => archive.mutate(!chat.archived)}>{chat.archived ? 'Restore' : 'Archive'}</button>
      )}
      <ErrorNote error={archive.error} />
    </>
  );
}
