/** OpenAI-shaped chat completion objects and stream chunks built from adapter results. */
import type { ChatChoice, ChatLogprobs, ChatResult, ChatTokenLogprob, ChatToolCall, FinishReason, TokenUsage } from '../../providers/types';

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

/** OpenAI's `logprobs` object of a choice (both lists always present). */
export interface LogprobsObject {
  content: ChatTokenLogprob[] | null;
  refusal: ChatTokenLogprob[] | null;
}

export function logprobsObject(logprobs: ChatLogprobs | undefined): LogprobsObject | null {
  return logprobs ? { content: logprobs.content, refusal: logprobs.refusal ?? null } : null;
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
    logprobs: LogprobsObject | null;
  }>;
  usage: ReturnType<typeof usageObject>;
  credits_used?: number;
}

/** Every choice of a result, in order. */
export function resultChoices(result: ChatResult): ChatChoice[] {
  return [result, ...(result.moreChoices ?? [])];
}

// No `system_fingerprint`: OpenAI's schema types it as a string, and there is no backend configuration to name.
export function chatCompletionObject(opts: { requestId: string; created: number; model: string; result: ChatResult }): ChatCompletionObject {
  const { result } = opts;
  return {
    id: completionId(opts.requestId),
    object: 'chat.completion',
    created: opts.created,
    model: opts.model,
    choices: resultChoices(result).map((choice, index) => ({
      index,
      message: { role: 'assistant', content: choice.content, ...(choice.toolCalls.length ? { tool_calls: choice.toolCalls } : {}), refusal: null },
      finish_reason: openAIFinishReason(choice.finishReason),
      logprobs: logprobsObject(choice.logprobs),
    })),
    usage: usageObject(result.usage),
  };
}

/** One `chat.completion.chunk` (`index`: the choice the delta belongs to). */
export function chunkObject(opts: {
  requestId: string; created: number; model: string; delta?: Record<string, unknown>; finishReason?: string | null; usage?: unknown; noChoices?: boolean;
  index?: number; logprobs?: ChatTokenLogprob[];
}) {
  const choice = { index: opts.index ?? 0, delta: opts.delta ?? {}, logprobs: opts.logprobs ? { content: opts.logprobs, refusal: null } : null, finish_reason: opts.finishReason ?? null };
  return {
    id: completionId(opts.requestId),
    object: 'chat.completion.chunk',
    created: opts.created,
    model: opts.model,
    choices: opts.noChoices ? [] : [choice],
    ...(opts.usage !== undefined ? { usage: opts.usage } : {}),
  };
}
