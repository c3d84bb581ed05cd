/** Streamed chat completions: OpenAI's SSE chunks turned into ChatStreamParts. */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, extractErrorMessage, parseSseJson, readSse, upstreamStream } from '../http';
import type { CallContext, ChatStreamPart, ChatTokenLogprob, FinishReason, TokenUsage } from '../types';
import { contentText, mapFinishReason, mapUsage, tokenLogprobs } from './chat-wire';
import { isObject, isOptionalString, type JsonObject } from './shape';

export async function* streamChatCompletion(connection: Connection, url: string, body: JsonObject, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
  const provider = connection.providerId;
  const { body: answer, done, endDeadline } = await upstreamStream(provider, url, connection.request(ctx, { json: body, headers: { accept: 'text/event-stream' } }));
  // The per-attempt deadline bounds the wait for the first byte; the stream itself is bounded by
  // readSse's idle timeout and by the caller's signal, which keeps cancelling the body until `done`.
  endDeadline();
  try {
    yield* translateStream(provider, answer, ctx);
  } finally {
    done();
  }
}

async function* translateStream(provider: string, answer: AsyncIterable<Uint8Array>, ctx: CallContext): AsyncGenerator<ChatStreamPart> {
  // By choice index (one choice unless the request asked for `n` > 1).
  const finishReasons: FinishReason[] = [];
  let usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  const finish = (): ChatStreamPart => {
    const reasons = Array.from(finishReasons, (reason) => reason ?? 'stop');
    return { type: 'finish', finishReason: reasons[0] ?? 'stop', usage, ...(reasons.length > 1 ? { finishReasons: reasons } : {}) };
  };
  for await (const event of readSse(provider, answer, { signal: ctx.signal })) {
    const data = event.data.trim();
    if (data === '[DONE]') {
      yield finish();
      return;
    }
    if (data === '') continue;
    const chunk = parseSseJson(provider, data);
    expectShape(provider, isObject(chunk), 'stream chunk is not an object');
    if (chunk.error !== undefined) {
      // A failure after the 200: the host gave up mid-answer, which is worth a retry.
      const message = extractErrorMessage(data);
      throw new UpstreamError(`${provider} failed during the stream${message ? `: ${message}` : ''}`, { kind: 'server_error', provider });
    }
    if (isObject(chunk.usage)) usage = mapUsage(chunk.usage);
    const choices = chunk.choices ?? [];
    expectShape(provider, Array.isArray(choices), 'stream chunk choices are not a list');
    for (const choice of choices) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === 'number' && Number.isInteger(choice.index) && choice.index >= 0 ? choice.index : 0;
      if (isObject(choice.delta)) yield* deltaParts(provider, choice.delta, index, isObject(choice.logprobs) ? tokenLogprobs(choice.logprobs.content) : undefined);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) finishReasons[index] = mapFinishReason(choice.finish_reason);
    }
  }
  // The body ended without `[DONE]`: a host that just closes after the last chunk has still finished
  // when it named a finish reason; otherwise the answer was cut off.
  if (finishReasons.length === 0) {
    throw new UpstreamError(`${provider} ended the stream before it finished`, { kind: 'network', provider, code: 'upstream_stream_truncated' });
  }
  yield finish();
}

function* deltaParts(provider: string, delta: JsonObject, index: number, logprobs: ChatTokenLogprob[] | null | undefined): Generator<ChatStreamPart> {
  expectShape(provider, isOptionalString(delta.refusal) && (delta.content === undefined || delta.content === null || typeof delta.content === 'string' || Array.isArray(delta.content)), 'stream delta content is not text');
  const text = contentText(delta.content) ?? delta.refusal;
  const choice = index > 0 ? { choice: index } : {};
  if (text) yield { type: 'text-delta', delta: text, ...choice, ...(logprobs ? { logprobs } : {}) };
  if (delta.tool_calls === undefined || delta.tool_calls === null) return;
  expectShape(provider, Array.isArray(delta.tool_calls), 'stream tool calls are not a list');
  for (const [position, call] of delta.tool_calls.entries()) {
    expectShape(provider, isObject(call), 'stream tool call is not an object');
    const fn = isObject(call.function) ? call.function : {};
    expectShape(provider, isOptionalString(call.id) && isOptionalString(fn.name), 'stream tool call id or name is not text');
    const args = fn.arguments;
    yield {
      type: 'tool-call-delta',
      // Hosts that send each call whole in one chunk sometimes omit the index.
      index: typeof call.index === 'number' ? call.index : position,
      ...choice,
      ...(typeof call.id === 'string' && call.id ? { id: call.id } : {}),
      ...(typeof fn.name === 'string' && fn.name ? { name: fn.name } : {}),
      argumentsDelta: typeof args === 'string' ? args : isObject(args) ? JSON.stringify(args) : '',
    };
  }
}
