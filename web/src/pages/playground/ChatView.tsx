/** A chat: its messages, settings (model, system prompt, parameters), the composer with attachments, images, sharing. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { playground, uploadOf, type ChatMessage } from '../../playground-api';
import { useCan, useMe } from '../../session';
import { credits, ErrorNote, Loading } from '../../ui';
import { MessageItem } from './MessageItem';
import { ModelPicker, ParamsPanel } from './ModelPicker';
import { ShareDialog } from './ShareDialog';
import { MediaPanel } from './MediaPanel';
import { MoveToProject, ProjectAttach } from './ChatProject';
import { DeleteChat } from './DeleteChat';
import { ChatActions, ChatTitle } from './ChatActions';

export function ChatView({ chatId }: { chatId: string }) {
  const can = useCan();
  const me = useMe().data?.user?.id;
  const client = useQueryClient();
  // A reader who may not send switches branches for themselves; others switch what the chat shows (kept on reload).
  const [readBranch, setReadBranch] = useState<string | undefined>();
  const chat = useQuery({
    queryKey: ['playground', 'chat', chatId, readBranch ?? null], queryFn: () => playground.chat(chatId, readBranch),
    // Image generations and replies held by another process: read again until they settle.
    refetchInterval: (q) => (q.state.data?.messages.some((m) => m.status === 'running') ? 1500 : false),
  });
  const [draft, setDraft] = useState('');
  const [files, setFiles] = useState<Array<{ id: string; filename: string }>>([]);
  const [imageSize, setImageSize] = useState('256x256');
  const [imageModel, setImageModel] = useState('sim-image');
  const [sharing, setSharing] = useState(false);
  const refresh = () => client.invalidateQueries({ queryKey: ['playground'] });
  const send = useMutation({
    mutationFn: (b: { content: string; from?: string }) => playground.send(chatId, { ...b, files: b.from ? undefined : files.map((f) => f.id) }),
    onSuccess: () => { setDraft(''); setFiles([]); void refresh(); },
  });
  // A chat reply asked again is a new branch beside the earlier one (both kept, with their receipts).
  const reply = useMutation({ mutationFn: (id: string) => playground.send(chatId, { regenerate: id }), onSuccess: () => void refresh() });
  const branch = useMutation({ mutationFn: (id: string) => playground.updateChat(chatId, { branch: id }), onSuccess: () => void refresh() });
  // A generation (image, speech, video, music, transcript) made again from its kept request: a branch beside the earlier one.
  const again = useMutation({ mutationFn: (m: ChatMessage) => playground.regenerate(chatId, m.id, m.generation!), onSuccess: () => void refresh() });
  const image = useMutation({ mutationFn: () => playground.generateImage(chatId, { model: imageModel, prompt: draft, size: imageSize }), onSuccess: () => { setDraft(''); void refresh(); } });
  const update = useMutation({ mutationFn: (b: Record<string, unknown>) => playground.updateChat(chatId, b), onSuccess: () => void refresh() });
  const upload = useMutation({
    mutationFn: async (file: File) => playground.upload(chatId, await uploadOf(file)),
    onSuccess: (f) => setFiles((list) => [...list, f]),
  });
  const bookmark = (messageId: string | null, on: boolean) => playground.bookmark(chatId, messageId, on).then(refresh);

  if (chat.isPending) return <Loading what="the chat" />;
  if (chat.isError) return <ErrorNote error={chat.error} />;
  const c = chat.data;
  const canSend = can('playground.use') && c.access !== 'read';
  const last = c.messages.at(-1);
  const regenerate = last?.role !== 'assistant' || last.status === 'running' ? null
    : last.generation ? () => again.mutate(last)
      : last.kind === 'text' ? () => reply.mutate(last.id) : null;
  const switchTo = (id: string) => (canSend ? branch.mutate(id) : setReadBranch(id));
  return (
    <section className="chat" aria-label="Chat">
      <header className="chat-head">
        <ChatTitle chat={c} canRename={canSend} />
        <span className="muted" data-testid="chat-total">Total {credits(c.total_credits)} credits</span>
        <button type="button" className="secondary" aria-pressed={c.bookmarked} onClick={() => void bookmark(null, !c.bookmarked)}>{c.bookmarked ? 'Pinned' : 'Pin'}</button>
        {c.access === 'owner' && <button type="button" className="secondary" onClick={() => setSharing(true)}>Share</button>}
        <ChatActions chat={c} />
        {c.access !== 'owner' && <span className="badge">shared with you · {c.access}</span>}
        {c.archived && <span className="badge">archived</span>}
      </header>
      {sharing && <ShareDialog chat={c} onClose={() => setSharing(false)} />}
      <div className="messages">
        {c.messages.length === 0 && <p className="empty">No messages yet.</p>}
        {c.messages.map((m) => (
          <MessageItem key={m.id} chatId={chatId} message={m} canSend={canSend} onBookmark={(on) => void bookmark(m.id, on)} onResend={(content) => send.mutate({ content, from: m.id })} onBranch={switchTo}
            author={m.user_id && m.user_id !== me ? c.authors?.[m.user_id] ?? 'A member' : null} />
        ))}
      </div>
      {canSend && regenerate && <button type="button" className="secondary" disabled={again.isPending || reply.isPending} onClick={regenerate}>Regenerate</button>}
      <ErrorNote error={again.error ?? reply.error ?? branch.error} />
      {canSend && (
        <form className="composer" onSubmit={(e) => { e.preventDefault(); send.mutate({ content: draft }); }}>
          <textarea aria-label="Message" aria-describedby="composer-keys" value={draft} onChange={(e) => setDraft(e.target.value)} rows={3} placeholder="Write a message (markdown welcome)"
            onKeyDown={(e) => {
              // Enter sends, as in every chat app; Shift+Enter is a new line; Enter while an input method composes is the IME's.
              if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
              e.preventDefault();
              if (!send.isPending && (draft.trim() || files.length > 0)) send.mutate({ content: draft });
            }} />
          <p id="composer-keys" className="muted small">Enter sends · Shift+Enter starts a new line</p>
          {c.project_id && <ProjectAttach projectId={c.project_id} attached={files} onChange={setFiles} />}
          {files.length > 0 && <p className="muted">Attached: {files.map((f) => f.filename).join(', ')}</p>}
          <div className="row">
            <button type="submit" disabled={send.isPending || (!draft.trim() && files.length === 0)}>Send</button>
            <label className="secondary file-button">Attach file<input type="file" className="sr-only" aria-label="Attach file" onChange={(e) => { const f = e.target.files?.[0]; if (f) upload.mutate(f); e.target.value = ''; }} /></label>
            <span className="spacer" />
            <ModelPicker label="Image model" modality="image" value={imageModel} onChange={setImageModel} />
            <label className="field"><span>Size</span><select value={imageSize} onChange={(e) => setImageSize(e.target.value)}>{['256x256', '512x512', '1024x1024'].map((s) => <option key={s}>{s}</option>)}</select></label>
            <button type="button" className="secondary" disabled={!draft.trim() || image.isPending} onClick={() => image.mutate()}>Generate image</button>
          </div>
          <ErrorNote error={send.error ?? image.error ?? upload.error} />
          <MediaPanel chatId={chatId} draft={draft} files={files} upload={(f) => upload.mutateAsync(f)} onStarted={() => { setDraft(''); setFiles([]); void refresh(); }} />
        </form>
      )}
      {canSend && (
        <details className="settings">
          <summary>Model and parameters</summary>
          <ModelPicker label="Model" modality="chat" value={c.model} onChange={(model) => update.mutate({ model })} />
          <label className="field"><span>System prompt</span>
            <textarea aria-label="System prompt" defaultValue={c.system_prompt} onBlur={(e) => update.mutate({ system_prompt: e.target.value })} rows={2} />
          </label>
          <ParamsPanel model={c.model} params={c.params} onChange={(params) => update.mutate({ params })} />
          {c.access === 'owner' && <MoveToProject value={c.project_id} onChange={(project_id) => update.mutate({ project_id })} />}
          {c.access === 'owner' && <DeleteChat chatId={chatId} title={c.title} />}
          <ErrorNote error={update.error} />
        </details>
      )}
    </section>
  );
}
