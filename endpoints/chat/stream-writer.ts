/** `chat.completion.chunk` events of a streamed chat completion, ending with `data: [DONE]`. */
import { microToCredits } from '../../core/money';
import type { ChatStreamFormat } from '../stream-writer';
import type { ChatCompletionBody } from './body';
import { choiceCount } from './request';
import { chunkObject, openAIFinishReason, usageObject } from './response';

export const chatCompletionChunks: ChatStreamFormat<ChatCompletionBody> = {
  chatBody: (body) => body,

  writer(body, { requestId, created, model, send }) {
    const base = { requestId, created, model };
    const choices = choiceCount(body);
    return {
      open() {
        for (let index = 0; index < choices; index++) send(chunkObject({ ...base, index, delta: { role: 'assistant', content: '' } }));
      },
      part(part) {
        // Chat completions carry no reasoning (nor Anthropic's own events).
        if (part.type === 'reasoning-delta' || part.type === 'anthropic-event') return;
        if (part.type === 'text-delta') {
          send(chunkObject({ ...base, index: part.choice, delta: { content: part.delta }, logprobs: part.logprobs }));
          return;
        }
        const call = { index: part.index, ...(part.id ? { id: part.id, type: 'function' } : {}), function: { ...(part.name ? { name: part.name } : {}), arguments: part.argumentsDelta } };
        send(chunkObject({ ...base, index: part.choice, delta: { tool_calls: [call] } }));
      },
      async finish({ finishReason, finishReasons, usage, chargeMicro }) {
        for (let index = 0; index < choices; index++) {
          send(chunkObject({ ...base, index, delta: {}, finishReason: openAIFinishReason(finishReasons?.[index] ?? finishReason) }));
        }
        if (body.stream_options?.include_usage) send(chunkObject({ ...base, noChoices: true, usage: { ...usageObject(usage), credits_used: microToCredits(chargeMicro) } }));
      },
      fail(error) {
        send({ error: { message: error.message, type: error.type, param: null, code: error.code } });
      },
      close() {
        send('[DONE]');
      },
    };
  },
};
