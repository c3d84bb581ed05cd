/**
 * A streamed Message: Anthropic's events from the chat stream's parts. `message_start` (then a `ping`)
 * opens it; each content block is `content_block_start`, its deltas (`thinking_delta` and `signature_delta`
 * for reasoning, `text_delta` for text, `input_json_delta` for a tool call's input), `content_block_stop`;
 * `message_delta` carries the stop reason and the usage it is billed on (with `credits_used`), and
 * `message_stop` ends it. An upstream failure after the first byte is an `error` event. An Anthropic model's
 * own events are written as they came (the model named by its catalog slug), only its `message_delta` and
 * `message_stop` held back until the answer is settled, so `message_delta` carries `credits_used` too.
 */
import { microToCredits } from '../../core/money';
import type { ChatStreamFormat } from '../stream-writer';
import { anthropicErrorBody } from './errors';
import { nativeRequest, toChatBody, type MessagesRequest } from './request';
import { messageObject, stopReason, textBlock, toolUseBlock } from './response';

type Open = { kind: 'thinking' } | { kind: 'text' } | { kind: 'tool'; index: number };

export const messageEvents: ChatStreamFormat<MessagesRequest> = {
  chatBody: (req, record) => toChatBody(req.body, record),
  chatRequest: (req, record) => nativeRequest(req, record),

  writer(_req, { requestId, model, send }) {
    const emit = (type: string, fields: Record<string, unknown>) => send({ type, ...fields }, type);
    // Opened with the first part: an Anthropic model's stream opens itself.
    let opened = false;
    let native = false;
    let held: Record<string, unknown> | null = null;
    const opening = () => {
      if (opened) return;
      opened = true;
      emit('message_start', { message: messageObject({ requestId, model, content: [], finishReason: null, usage: null }) });
      emit('ping', {});
    };
    const passOn = (event: Record<string, unknown>) => {
      opened = true;
      native = true;
      const type = String(event.type);
      if (type === 'message_delta') held = event;
      else if (type === 'message_stop') return;
      else if (type === 'message_start') send({ ...event, message: { ...(event.message as object), model } }, type);
      else send(event, type);
    };
    let blockIndex = -1;
    let open: Open | null = null;
    const close = () => {
      if (open) emit('content_block_stop', { index: blockIndex });
      open = null;
    };
    const start = (next: Open, contentBlock: Record<string, unknown>) => {
      close();
      open = next;
      blockIndex += 1;
      emit('content_block_start', { index: blockIndex, content_block: contentBlock });
    };
    const delta = (fields: Record<string, unknown>) => emit('content_block_delta', { index: blockIndex, delta: fields });

    return {
      open() {
        // Written with the first part (see `opening`).
      },

      part(part) {
        if (part.type === 'anthropic-event') {
          passOn(part.event);
          return;
        }
        if (native) return;
        opening();
        if (part.type === 'reasoning-delta') {
          if (open?.kind !== 'thinking') start({ kind: 'thinking' }, { type: 'thinking', thinking: '', signature: '' });
          if (part.delta) delta({ type: 'thinking_delta', thinking: part.delta });
          if (part.signature) {
            delta({ type: 'signature_delta', signature: part.signature });
            close();
          }
          return;
        }
        if (part.type === 'text-delta') {
          if (open?.kind !== 'text') start({ kind: 'text' }, textBlock(''));
          if (part.delta) delta({ type: 'text_delta', text: part.delta });
          return;
        }
        if (open?.kind !== 'tool' || open.index !== part.index) {
          start({ kind: 'tool', index: part.index }, toolUseBlock({ id: part.id ?? `toolu_${requestId.replace(/-/g, '')}_${part.index}`, name: part.name ?? '' }, {}));
        }
        if (part.argumentsDelta) delta({ type: 'input_json_delta', partial_json: part.argumentsDelta });
      },

      async finish({ finishReason, usage, chargeMicro }) {
        if (native) {
          send({ ...(held ?? { type: 'message_delta' }), credits_used: microToCredits(chargeMicro) }, 'message_delta');
          emit('message_stop', {});
          return;
        }
        opening();
        close();
        emit('message_delta', {
          delta: { stop_reason: stopReason(finishReason), stop_sequence: null, stop_details: null, container: null },
          usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: null },
          credits_used: microToCredits(chargeMicro),
        });
        emit('message_stop', {});
      },

      fail(error) {
        opening();
        send(anthropicErrorBody(error, requestId), 'error');
      },

      close() {
        // Message streams end with `message_stop` (or `error`).
      },
    };
  },
};
