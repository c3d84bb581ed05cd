/** OpenAI-shaped chat completion objects and stream chunks built from adapter results. */
import type { ChatResult, ChatToolCall, FinishReason, TokenUsage } from '../../providers/types';

export function completionId(requestId: string): string {
  return `chatcmpl-${requestId.replace(/-/g, '')}`;
}

/** OpenAI's finish_reason vocabulary (our closed union maps onto it). */
export function openAIFinishReason(reason: FinishReason): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (reason) {
    case 'length': return 'length';
    case 'tool_calls': return 'tool_calls';
    case 'content_filter': return 'content_filter';
    default: return 'stop';
  }
}

export function usageObject(usage: TokenUsage) {
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

export interface ChatCompletionObject {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; refusal: null };
    finish_reason: string;
    logprobs: null;
  }>;
  usage: ReturnType<typeof usageObject>;
  system_fingerprint: null;
  credits_used?: number;
}

export function chatCompletionObject(opts: { requestId: string; created: number; model: string; result: ChatResult }): ChatCompletionObject {
  const { result } = opts;
  return {
    id: completionId(opts.requestId),
    object: 'chat.completion',
    created: opts.created,
    model: opts.model,
    choices: [{
      index: 0,
      message: { role: 'assistant', content: result.content, ...(result.toolCalls.length ? { tool_calls: result.toolCalls } : {}), refusal: null },
      finish_reason: openAIFinishReason(result.finishReason),
      logprobs: null,
    }],
    usage: usageObject(result.usage),
    system_fingerprint: null,
  };
}

/** One `chat.completion.chunk`. */
export function chunkObject(opts: { requestId: string; created: number; model: string; delta?: Record<string, unknown>; finishReason?: string | null; usage?: unknown; noChoices?: boolean }) {
  return {
    id: completionId(opts.requestId),
    object: 'chat.completion.chunk',
    created: opts.created,
    model: opts.model,
    system_fingerprint: null,
    choices: opts.noChoices ? [] : [{ index: 0, delta: opts.delta ?? {}, logprobs: null, finish_reason: opts.finishReason ?? null }],
    ...(opts.usage !== undefined ? { usage: opts.usage } : {}),
  };
}
