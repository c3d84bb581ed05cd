/**
 * A chat as a file to keep: Markdown to read (each message under its author, with what it cost) or JSON
 * to process (the chat's settings and every message of the branch on show, with its receipt).
 */
import type { ChatDetail, ChatMessage } from '../../playground-api';

const fileName = (title: string, ext: string) => `${title.replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '').slice(0, 60) || 'chat'}.${ext}`;

function author(m: ChatMessage): string {
  return m.role === 'user' ? 'User' : `Assistant (${m.model ?? 'model'})`;
}

export function chatMarkdown(c: ChatDetail): string {
  const parts = [`# ${c.title}`, '', `Model: ${c.model}${c.system_prompt ? `  \nSystem prompt: ${c.system_prompt}` : ''}`, ''];
  for (const m of c.messages) {
    parts.push(`## ${author(m)}`, '', m.content || (m.files.length ? `(${m.files.length} file${m.files.length === 1 ? '' : 's'})` : ''), '');
    if (m.receipt) parts.push(`_${m.receipt.credits} credits · served by ${m.receipt.modelUsed ?? '—'} · request ${m.receipt.requestId}_`, '');
  }
  return parts.join('\n');
}

export function chatJsonExport(c: ChatDetail): string {
  return JSON.stringify({
    id: c.id, title: c.title, model: c.model, system_prompt: c.system_prompt, params: c.params, total_credits: c.total_credits,
    messages: c.messages.map((m) => ({
      id: m.id, role: m.role, kind: m.kind, content: m.content, files: m.files, model: m.model, status: m.status, request_id: m.request_id,
      credits: m.receipt?.credits ?? null, model_used: m.receipt?.modelUsed ?? null,
    })),
  }, null, 2);
}

/** Offers `text` as a download named after the chat. */
export function download(c: ChatDetail, format: 'md' | 'json'): void {
  const blob = new Blob([format === 'md' ? chatMarkdown(c) : chatJsonExport(c)], { type: format === 'md' ? 'text/markdown' : 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName(c.title, format);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
