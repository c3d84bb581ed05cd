/**
 * Anthropic's Message object built from a chat answer: reasoning as `thinking` blocks (with their
 * signatures), the text as a `text` block, each tool call as a `tool_use` block, the stop reason and the
 * usage in Anthropic's terms. The streamed and the plain answer build the same blocks here.
 */
import type { ChatReasoning, ChatToolCall, FinishReason, TokenUsage } from '../../providers/types';

export function messageId(requestId: string): string {
  return `msg_${requestId.replace(/-/g, '')}`;
}

/** Anthropic's stop_reason for the gateway's finish reason. */
export function stopReason(reason: FinishReason | null): 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal' | null {
  switch (reason) {
    case null: return null;
    case 'length': return 'max_tokens';
    case 'tool_calls': return 'tool_use';
    case 'content_filter': return 'refusal';
    default: return 'end_turn';
  }
}

export function usageOf(usage: TokenUsage | null) {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
  };
}

/** Tool arguments as the object Anthropic's `input` is (a model's broken JSON is kept as its text). */
export function toolInput(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const parsed = JSON.parse(args);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { value: parsed };
  } catch {
    return { arguments: args };
  }
}

export const thinkingBlock = (r: ChatReasoning) => ({ type: 'thinking', thinking: r.text, signature: r.signature });
export const textBlock = (text: string) => ({ type: 'text', text, citations: null });
export const toolUseBlock = (call: { id: string; name: string }, input: Record<string, unknown>) => ({ type: 'tool_use', id: call.id, name: call.name, input, caller: { type: 'direct' } });

/** A finished answer's content blocks: reasoning, text (when there is any), tool calls. */
export function contentBlocks(answer: { content: string | null; toolCalls: ChatToolCall[]; reasoning?: ChatReasoning[] }) {
  return [
    ...(answer.reasoning ?? []).map(thinkingBlock),
    ...(answer.content !== null && (answer.content !== '' || answer.toolCalls.length === 0) ? [textBlock(answer.content)] : []),
    ...answer.toolCalls.map((call) => toolUseBlock({ id: call.id, name: call.function.name }, toolInput(call.function.arguments))),
  ];
}

export function messageObject(o: { requestId: string; model: string; content: unknown[]; finishReason: FinishReason | null; usage: TokenUsage | null }) {
  return {
    id: messageId(o.requestId),
    type: 'message',
    role: 'assistant',
    model: o.model,
    content: o.content,
    stop_reason: stopReason(o.finishReason),
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: usageOf(o.usage),
  };
}
