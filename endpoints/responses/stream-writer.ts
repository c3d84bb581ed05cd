/**
 * A streamed Response: OpenAI's Responses events, numbered by `sequence_number`, from the chat stream's
 * parts. `response.created` and `response.in_progress` open it; text arrives in a `message` item
 * (`output_item.added`, `content_part.added`, `output_text.delta`...), each tool call in a `function_call`
 * item (`output_item.added`, `function_call_arguments.delta`...); at the end every item is closed (`.done`
 * events) and `response.completed` (or `response.incomplete`) carries the whole response with its usage
 * and `credits_used`. An upstream failure after the first byte is an `error` event then `response.failed`.
 */
import { microToCredits } from '../../core/money';
import type { ResponseItem } from '../../domain/responses';
import type { FinishReason, TokenUsage } from '../../providers/types';
import type { ChatStreamFormat } from '../stream-writer';
import { responseIds } from './items';
import { toChatBody, type ResponsesRequest } from './request';
import { finishedStatus, keepResponse, outputItem, outputText, responseObject, type OutputEntry, type ResponseStatus } from './response';

export const responseEvents: ChatStreamFormat<ResponsesRequest> = {
  chatBody: (body) => toChatBody(body),

  writer(req, { requestId, created, model, send, db, workspaceId }) {
    const ids = responseIds(requestId);
    const output: OutputEntry[] = [];
    let message: Extract<OutputEntry, { kind: 'message' }> | null = null;
    const calls = new Map<number, Extract<OutputEntry, { kind: 'function_call' }>>();
    let sequence = 0;
    const emit = (type: string, fields: Record<string, unknown>) => send({ type, sequence_number: sequence++, ...fields }, type);

    const items = (status: 'in_progress' | 'completed' | 'incomplete'): ResponseItem[] => output.map((entry) => outputItem(entry, status));
    const snapshot = (status: ResponseStatus, o: { usage?: TokenUsage; finishReason?: FinishReason; error?: { code: string; message: string } } = {}) => responseObject(req, {
      id: ids.response, createdAt: created, model, status, usage: o.usage ?? null, finishReason: o.finishReason ?? null, error: o.error,
      output: items(status === 'failed' ? 'incomplete' : status),
    });

    return {
      open() {
        const response = snapshot('in_progress');
        emit('response.created', { response });
        emit('response.in_progress', { response });
      },

      part(part) {
        // Reasoning is not returned in Responses (no reasoning items are produced), nor Anthropic's own events.
        if (part.type === 'reasoning-delta' || part.type === 'anthropic-event') return;
        if (part.type === 'text-delta') {
          if (!message) {
            message = { kind: 'message', id: ids.output('msg', output.length), text: '' };
            output.push(message);
            const outputIndex = output.length - 1;
            emit('response.output_item.added', { output_index: outputIndex, item: outputItem(message, 'in_progress') });
            emit('response.content_part.added', { item_id: message.id, output_index: outputIndex, content_index: 0, part: outputText('') });
          }
          message.text += part.delta;
          emit('response.output_text.delta', { item_id: message.id, output_index: output.indexOf(message), content_index: 0, delta: part.delta, logprobs: [] });
          return;
        }
        let call = calls.get(part.index);
        if (!call) {
          const id = ids.output('fc', output.length);
          call = { kind: 'function_call', id, callId: part.id ?? `call_${id}`, name: part.name ?? '', arguments: '' };
          calls.set(part.index, call);
          output.push(call);
          emit('response.output_item.added', { output_index: output.length - 1, item: outputItem(call, 'in_progress') });
        }
        if (part.name && !call.name) call.name = part.name;
        if (part.argumentsDelta) {
          call.arguments += part.argumentsDelta;
          emit('response.function_call_arguments.delta', { item_id: call.id, output_index: output.indexOf(call), delta: part.argumentsDelta });
        }
      },

      async finish({ finishReason, usage, chargeMicro }) {
        const status = finishedStatus(finishReason);
        const done = items(status);
        done.forEach((item, outputIndex) => {
          const entry = output[outputIndex];
          if (entry.kind === 'message') {
            emit('response.output_text.done', { item_id: entry.id, output_index: outputIndex, content_index: 0, text: entry.text, logprobs: [] });
            emit('response.content_part.done', { item_id: entry.id, output_index: outputIndex, content_index: 0, part: outputText(entry.text) });
          } else {
            emit('response.function_call_arguments.done', { item_id: entry.id, output_index: outputIndex, name: entry.name, arguments: entry.arguments });
          }
          emit('response.output_item.done', { output_index: outputIndex, item });
        });
        const response = { ...snapshot(status, { usage, finishReason }), credits_used: microToCredits(chargeMicro) };
        try {
          await keepResponse(db, workspaceId, req, response);
        } catch {
          // The answer was delivered (and is billed); the client learns it cannot continue from it.
          emit('error', { code: 'response_not_stored', message: 'The response could not be stored: it cannot be retrieved or continued with previous_response_id.', param: null });
        }
        emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
      },

      fail(error) {
        emit('error', { code: error.code, message: error.message, param: error.param });
        const code = error.status === 429 ? 'rate_limit_exceeded' : 'server_error';
        emit('response.failed', { response: snapshot('failed', { error: { code, message: error.message } }) });
      },

      close() {
        // Responses streams end with their last event; there is no `[DONE]`.
      },
    };
  },
};
