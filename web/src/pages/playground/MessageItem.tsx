/** One message: markdown (or an image gallery), live text while it runs, its receipt, bookmark, regenerate and edit. */
import { useState } from 'react';
import { playground, type ChatMessage } from '../../playground-api';
import { FixLink, fixFor } from '../../ui';
import { Markdown } from './Markdown';
import { Receipt } from './Receipt';
import { useReply } from './useReply';

interface Props {
  chatId: string;
  message: ChatMessage;
  canSend: boolean;
  onBookmark: (on: boolean) => void;
  onResend: (content: string) => void;
  /** Shows the branch through another message of this turn. */
  onBranch: (messageId: string) => void;
  /** The author's name when another member wrote the prompt (null: the reader wrote it). */
  author?: string | null;
}

export function MessageItem({ chatId, message, canSend, onBookmark, onResend, onBranch, author = null }: Props) {
  const running = message.status === 'running';
  const live = useReply(chatId, running && message.kind === 'text' ? message.id : null);
  const [editing, setEditing] = useState<string | null>(null);
  const text = running ? live : message.content;
  return (
    <article className={`message ${message.role}`} aria-label={`${message.role} message`} data-status={message.status}>
      <header className="message-head">
        <span>{message.role === 'user' ? author ?? 'You' : message.model}</span>
        <span className="message-actions">
          <BranchSwitch message={message} onBranch={onBranch} />
          <button type="button" className="link" aria-pressed={message.bookmarked} onClick={() => onBookmark(!message.bookmarked)}>
            {message.bookmarked ? 'Bookmarked' : 'Bookmark'}
          </button>
          {canSend && message.role === 'user' && <button type="button" className="link" onClick={() => setEditing(message.content)}>Edit</button>}
          {canSend && running && <button type="button" className="link" onClick={() => void playground.stop(message.id)}>Stop</button>}
        </span>
      </header>
      {editing !== null ? (
        <form onSubmit={(e) => { e.preventDefault(); onResend(editing); setEditing(null); }}>
          <textarea aria-label="Edit message" value={editing} onChange={(e) => setEditing(e.target.value)} rows={3} />
          <div className="row"><button type="submit">Resend</button><button type="button" className="secondary" onClick={() => setEditing(null)}>Cancel</button></div>
        </form>
      ) : message.kind === 'image' ? (
        <div className="gallery">
          {message.files.map((id) => <img key={id} src={playground.fileUrl(id)} alt="Generated image" />)}
          {running && <p className="muted" role="status">Generating…</p>}
        </div>
      ) : message.kind === 'audio' ? (
        <div className="audio">
          <p>{message.content}</p>
          {message.files.map((id) => <audio key={id} controls src={playground.fileUrl(id)} aria-label="Generated audio" />)}
          {running && <p className="muted" role="status">Generating…</p>}
        </div>
      ) : message.kind === 'video' ? (
        <div className="video">
          {message.job?.status === 'succeeded' && <video controls src={playground.videoUrl(message.id)} aria-label="Generated video" />}
          {running && <progress max={100} value={message.job?.progress ?? 0} aria-label="Video progress">{message.job?.progress ?? 0}%</progress>}
          {running && <p className="muted" role="status">{message.job?.status === 'processing' ? `Rendering… ${message.job.progress}%` : 'Queued…'}</p>}
        </div>
      ) : (
        <>
          {message.role === 'user' && (message.attachments ?? message.files.map((id) => ({ id, filename: null, content_type: 'image/' }))).map((f) => (
            f.content_type?.startsWith('audio/') ? <audio key={f.id} controls src={playground.fileUrl(f.id)} aria-label={`Attached audio ${f.filename ?? ''}`.trim()} />
              : f.content_type?.startsWith('image/') ? <img key={f.id} className="attachment" src={playground.fileUrl(f.id)} alt="Attachment" />
                : <a key={f.id} href={playground.fileUrl(f.id)} target="_blank" rel="noreferrer">{f.filename ?? 'Attachment'}</a>
          ))}
          <Markdown text={text} />
          {running && <p className="muted" role="status">Generating…</p>}
        </>
      )}
      {message.error && <p className="error" role="alert">{message.error}<FixLink fix={fixFor({ code: message.error_code ?? null, keySource: message.receipt?.keySource })} /></p>}
      {message.status === 'stopped' && <p className="muted">Stopped.</p>}
      {message.role === 'assistant' && <Receipt message={message} />}
    </article>
  );
}

/** "< 2/3 >" on a message with siblings: the branches at this turn (an edited prompt, a reply asked again). */
function BranchSwitch({ message, onBranch }: { message: ChatMessage; onBranch: (messageId: string) => void }) {
  const siblings = message.siblings ?? [];
  if (siblings.length < 2) return null;
  const at = siblings.indexOf(message.id);
  const noun = message.role === 'user' ? 'prompt' : 'reply';
  return (
    <span className="branch-switch" role="group" aria-label={`Versions of this ${noun}`}>
      <button type="button" className="link" aria-label={`Previous ${noun}`} disabled={at <= 0} onClick={() => onBranch(siblings[at - 1])}>&lt;</button>
      <span data-testid="branch-position">{at + 1}/{siblings.length}</span>
      <button type="button" className="link" aria-label={`Next ${noun}`} disabled={at >= siblings.length - 1} onClick={() => onBranch(siblings[at + 1])}>&gt;</button>
    </span>
  );
}
