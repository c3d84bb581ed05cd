/**
 * The chat-completions body a Playground message sends: the project's instructions and the chat's system
 * prompt, the conversation so far (attached images inlined as data URLs, text files as text), and the
 * chat's parameters. The body is then validated exactly as an API call's would be.
 */
import type { ObjectStorage } from '../../infra/storage';
import type { Chat, Message, PlaygroundFile } from '../../domain/playground';
import { validateChatCompletionBody, type ChatCompletionBody } from '../../endpoints/chat/body';

async function bytesOf(storage: ObjectStorage, file: PlaygroundFile): Promise<Buffer> {
  const object = await storage.get(file.storageKey);
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function chatBody(
  storage: ObjectStorage,
  opts: { chat: Chat; instructions: string; history: Message[]; files: Map<string, PlaygroundFile>; model: string; params: Record<string, unknown> },
): Promise<ChatCompletionBody> {
  const messages: unknown[] = [];
  const system = [opts.instructions, opts.chat.systemPrompt].filter((s) => s.trim()).join('\n\n');
  if (system) messages.push({ role: 'system', content: system });
  for (const m of opts.history) {
    if (m.kind !== 'text' || m.status === 'failed' || m.status === 'running') continue;
    if (m.role === 'assistant') {
      messages.push({ role: 'assistant', content: m.content });
      continue;
    }
    const attached = m.files.map((id) => opts.files.get(id)).filter((f): f is PlaygroundFile => Boolean(f));
    if (attached.length === 0) {
      messages.push({ role: m.role, content: m.content });
      continue;
    }
    const parts: unknown[] = [{ type: 'text', text: m.content }];
    for (const file of attached) {
      const bytes = await bytesOf(storage, file);
      if (file.contentType.startsWith('image/')) parts.push({ type: 'image_url', image_url: { url: `data:${file.contentType};base64,${bytes.toString('base64')}` } });
      else parts.push({ type: 'text', text: `File ${file.filename}:\n${bytes.toString('utf8')}` });
    }
    messages.push({ role: m.role, content: parts });
  }
  return validateChatCompletionBody({ ...opts.params, model: opts.model, messages, stream: true, stream_options: { include_usage: true } });
}

export { bytesOf };
