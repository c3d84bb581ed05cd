/** Reads a Messages API answer into the gateway's ChatResult. */
import { expectShape } from '../http';
import type { ChatResult, ChatToolCall, FinishReason, TokenUsage } from '../types';
import { JSON_TOOL_NAME, jsonAnswerText, type JsonToolPlan } from './json-mode';
import type { AnthropicMessagesResponse, AnthropicUsage } from './wire';

export function parseMessagesResponse(provider: string, body: unknown, jsonTool: JsonToolPlan | null): ChatResult {
  const message = body as AnthropicMessagesResponse;
  expectShape(provider, !!message && typeof message === 'object' && Array.isArray(message.content), 'no content array');
  expectShape(provider, !!message.usage && typeof message.usage === 'object', 'no usage');

  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  let jsonAnswer: string | null = null;
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      expectShape(provider, typeof block.id === 'string' && typeof block.name === 'string', 'tool_use block without id or name');
      if (jsonTool && block.name === JSON_TOOL_NAME) {
        jsonAnswer = jsonAnswerText(block.input, jsonTool.wrapped);
        continue;
      }
      toolCalls.push({ id: block.id!, type: 'function', function: { name: block.name!, arguments: JSON.stringify(block.input ?? {}) } });
    }
    // thinking, redacted_thinking and server-tool blocks carry nothing the caller asked for.
  }

  const content = jsonAnswer ?? (texts.length > 0 ? texts.join('') : null);
  let finishReason = mapStopReason(message.stop_reason);
  // The JSON tool is how the model answers in JSON mode, not a call the caller must run.
  if (finishReason === 'tool_calls' && toolCalls.length === 0) finishReason = 'stop';
  return { content, toolCalls, finishReason, usage: toTokenUsage(message.usage), upstreamId: message.id };
}

export function mapStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'other';
  }
}

/** Cached prompt tokens are reported apart from `input_tokens`; all of them are prompt tokens. */
export function inputTokensOf(usage: AnthropicUsage): number {
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/** The usage with its cached prompt tokens apart (writes of 1-hour lifetime apart from 5-minute ones), as they are priced. */
export function toTokenUsage(usage: AnthropicUsage): TokenUsage {
  const written = usage.cache_creation_input_tokens ?? 0;
  const written1h = Math.min(written, usage.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  const read = usage.cache_read_input_tokens ?? 0;
  return {
    inputTokens: inputTokensOf(usage), outputTokens: usage.output_tokens ?? 0,
    ...(written - written1h > 0 ? { cacheWriteTokens: written - written1h } : {}),
    ...(written1h > 0 ? { cacheWrite1hTokens: written1h } : {}),
    ...(read > 0 ? { cacheReadTokens: read } : {}),
  };
}
