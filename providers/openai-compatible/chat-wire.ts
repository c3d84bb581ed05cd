/** Translation between the gateway's ChatRequest/ChatResult and the `/chat/completions` wire format. */
import type { ChatLogprobs, ChatRequest, ChatTokenLogprob, ChatToolCall, FinishReason, TokenUsage } from '../types';
import { isObject, tokenCount, type JsonObject } from './shape';

export function chatCompletionBody(model: string, req: ChatRequest, opts: { maxCompletionTokens: boolean }): JsonObject {
  const body: JsonObject = { model, messages: req.messages };
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools;
    // OpenAI refuses parallel_tool_calls without tools, so it only travels with them.
    if (req.parallelToolCalls !== undefined) body.parallel_tool_calls = req.parallelToolCalls;
  }
  if (req.toolChoice !== undefined) body.tool_choice = req.toolChoice;
  if (req.responseFormat !== undefined) body.response_format = req.responseFormat;
  if (req.maxTokens !== undefined) body[opts.maxCompletionTokens ? 'max_completion_tokens' : 'max_tokens'] = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop !== undefined && req.stop.length > 0) body.stop = req.stop;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.user !== undefined) body.user = req.user;
  if (req.n !== undefined && req.n > 1) body.n = req.n;
  if (req.logprobs !== undefined) body.logprobs = req.logprobs;
  if (req.topLogprobs !== undefined) body.top_logprobs = req.topLogprobs;
  if (req.logitBias !== undefined) body.logit_bias = req.logitBias;
  if (req.reasoningEffort !== undefined) body.reasoning_effort = req.reasoningEffort;
  if (req.verbosity !== undefined) body.verbosity = req.verbosity;
  return body;
}

/** A choice's `logprobs` as the host sent it, when it has OpenAI's shape (anything else is left out). */
export function mapLogprobs(value: unknown): ChatLogprobs | undefined {
  if (!isObject(value)) return undefined;
  const content = tokenLogprobs(value.content);
  if (content === undefined) return undefined;
  const refusal = tokenLogprobs(value.refusal);
  return refusal ? { content, refusal } : { content };
}

/** A list of per-token log probabilities, or undefined when it is not one. */
export function tokenLogprobs(value: unknown): ChatTokenLogprob[] | null | undefined {
  if (value === null) return null;
  if (!Array.isArray(value) || !value.every(isTokenLogprob)) return undefined;
  return (value as JsonObject[]).map((entry) => ({
    token: entry.token as string,
    logprob: entry.logprob as number,
    bytes: Array.isArray(entry.bytes) ? (entry.bytes as number[]) : null,
    top_logprobs: Array.isArray(entry.top_logprobs)
      ? (entry.top_logprobs as unknown[]).filter(isTokenLogprob).map((top) => ({ token: top.token as string, logprob: top.logprob as number, bytes: Array.isArray(top.bytes) ? (top.bytes as number[]) : null }))
      : [],
  }));
}

function isTokenLogprob(value: unknown): value is JsonObject {
  return isObject(value) && typeof value.token === 'string' && typeof value.logprob === 'number';
}

/** OpenAI's reasons plus the spellings other OpenAI-compatible hosts use for the same thing. */
const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  eos: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  length: 'length',
  model_length: 'length',
  max_tokens: 'length',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  tool_use: 'tool_calls',
  content_filter: 'content_filter',
  error: 'error',
};

export function mapFinishReason(value: unknown): FinishReason {
  return typeof value === 'string' ? (FINISH_REASONS[value] ?? 'other') : 'other';
}

export function mapUsage(usage: unknown): TokenUsage {
  if (!isObject(usage)) return { inputTokens: 0, outputTokens: 0 };
  return { inputTokens: tokenCount(usage.prompt_tokens), outputTokens: tokenCount(usage.completion_tokens) };
}

/** Whether a wire tool call has what we need; hosts differ on `type`, so it is not required. */
export function isWireToolCall(value: unknown): boolean {
  if (!isObject(value) || !isObject(value.function)) return false;
  const { name, arguments: args } = value.function;
  return typeof name === 'string' && (args === undefined || typeof args === 'string' || isObject(args));
}

export function mapToolCall(value: JsonObject, index: number): ChatToolCall {
  const fn = value.function as JsonObject;
  const args = fn.arguments;
  return {
    id: typeof value.id === 'string' && value.id ? value.id : `call_${index}`,
    type: 'function',
    function: {
      name: fn.name as string,
      // Some hosts send arguments as an object rather than OpenAI's JSON string.
      arguments: typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args),
    },
  };
}

/** Message content as text: OpenAI sends a string; a few hosts send an array of typed parts. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts = content.filter((part) => isObject(part) && part.type === 'text' && typeof part.text === 'string').map((part) => (part as JsonObject).text as string);
  return texts.length > 0 ? texts.join('') : null;
}

export function isWireContent(content: unknown): boolean {
  return content === undefined || content === null || typeof content === 'string' || Array.isArray(content);
}
