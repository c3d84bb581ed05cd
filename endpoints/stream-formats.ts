/** The wire format a streamed chat answer is written in, by the endpoint that asked for it. */
import { chatCompletionChunks } from './chat/stream-writer';
import { responseEvents } from './responses/stream-writer';
import { messageEvents } from './messages/stream-writer';
import type { ChatStreamFormat } from './stream-writer';
import type { Endpoint } from './types';

const FORMATS: Partial<Record<Endpoint, ChatStreamFormat>> = {
  'chat.completions': chatCompletionChunks,
  responses: responseEvents,
  messages: messageEvents,
};

export function chatStreamFormat(endpoint: Endpoint): ChatStreamFormat {
  const format = FORMATS[endpoint];
  if (!format) throw new Error(`endpoint ${endpoint} does not stream chat answers`);
  return format;
}
