/**
 * Translates OpenAI-style content parts into Anthropic content blocks: text, images (inline base64 or
 * by URL) and documents (PDF or plain text sent as `file` parts).
 */
import { InvalidRequestError } from '../../core/errors';
import type { ChatContentPart } from '../types';
import type { AnthropicContentBlock } from './wire';

export function contentToBlocks(content: string | ChatContentPart[] | null | undefined): AnthropicContentBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const blocks: AnthropicContentBlock[] = [];
  for (const part of content) {
    const block = partToBlock(part);
    if (block) blocks.push(block);
  }
  return blocks;
}

/** Plain text of a message, for places that only take text (the system prompt). */
export function contentToText(content: string | ChatContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.filter((p): p is { type: 'text'; text: string } => p.type === 'text').map((p) => p.text).join('\n');
}

function partToBlock(part: ChatContentPart): AnthropicContentBlock | null {
  switch (part.type) {
    case 'text':
      // The API refuses empty text blocks.
      return part.text === '' ? null : { type: 'text', text: part.text };
    case 'image_url': {
      const url = part.image_url.url;
      const inline = parseDataUrl(url);
      if (inline) return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } };
      if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
      throw new InvalidRequestError('image_url must be an http(s) URL or a base64 data: URL', { param: 'messages', code: 'invalid_image_url' });
    }
    case 'file': {
      const inline = part.file.file_data ? parseDataUrl(part.file.file_data) : null;
      if (!inline) {
        throw new InvalidRequestError('This model takes files only as inline data (file_data as a base64 data: URL)', { param: 'messages', code: 'unsupported_file' });
      }
      if (inline.mediaType.startsWith('image/')) return { type: 'image', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 } };
      if (inline.mediaType.startsWith('text/')) {
        return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(inline.base64, 'base64').toString('utf8') }, ...title(part.file.filename) };
      }
      return { type: 'document', source: { type: 'base64', media_type: inline.mediaType, data: inline.base64 }, ...title(part.file.filename) };
    }
    case 'input_audio':
      throw new InvalidRequestError('This model does not accept audio input; transcribe the audio first and send text', {
        param: 'messages', code: 'audio_not_supported_by_model',
      });
  }
}

function title(filename: string | undefined): { title?: string } {
  return filename ? { title: filename } : {};
}

export function parseDataUrl(url: string): { mediaType: string; base64: string } | null {
  const match = /^data:([^;,]+)?((?:;[^;,]*)*?);base64,/i.exec(url);
  if (!match) return null;
  return { mediaType: (match[1] ?? 'application/octet-stream').toLowerCase(), base64: url.slice(match[0].length) };
}
