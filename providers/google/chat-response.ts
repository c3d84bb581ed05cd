/** Reads generateContent answers (whole, or one streamed chunk at a time) into the gateway's shapes. */
import { expectShape } from '../http';
import type { ChatResult, ChatToolCall, FinishReason, TokenUsage } from '../types';
import { makeToolCallId } from './tool-call-ids';
import type { GeminiGenerateContentResponse, GeminiPart, GeminiUsageMetadata } from './wire';

export function parseGenerateContentResponse(provider: string, body: unknown): ChatResult {
  const answer = body as GeminiGenerateContentResponse;
  expectShape(provider, !!answer && typeof answer === 'object' && !Array.isArray(answer), 'not an object');
  const candidate = answer.candidates?.[0];
  if (!candidate) {
    // The prompt itself was blocked: no candidates, only the reason.
    expectShape(provider, !!answer.promptFeedback?.blockReason, 'no candidates');
    return { content: null, toolCalls: [], finishReason: 'content_filter', usage: toTokenUsage(answer.usageMetadata), upstreamId: answer.responseId };
  }
  const parts = candidate.content?.parts ?? [];
  expectShape(provider, Array.isArray(parts), 'candidate parts are not a list');

  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const part of parts) {
    if (typeof part.text === 'string' && !part.thought) texts.push(part.text);
    if (part.functionCall) toolCalls.push(toToolCall(provider, answer.responseId, toolCalls.length, part));
  }
  return {
    content: texts.length > 0 ? texts.join('') : null,
    toolCalls,
    finishReason: mapFinishReason(candidate.finishReason, toolCalls.length > 0),
    usage: toTokenUsage(answer.usageMetadata),
    upstreamId: answer.responseId,
  };
}

export function toToolCall(provider: string, responseId: string | undefined, index: number, part: GeminiPart): ChatToolCall {
  const call = part.functionCall!;
  expectShape(provider, typeof call.name === 'string', 'function call without a name');
  const args = call.args ?? {};
  return {
    id: makeToolCallId(responseId, index, call.name, args, part.thoughtSignature),
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(args) },
  };
}

/** Gemini says STOP even when it called functions; OpenAI clients expect `tool_calls` then. */
export function mapFinishReason(reason: string | undefined, calledTools: boolean): FinishReason {
  switch (reason) {
    case 'STOP':
      return calledTools ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
      return 'error';
    default:
      return calledTools ? 'tool_calls' : 'other';
  }
}

/** Thinking tokens are billed as output; tool-use prompt tokens as input. */
export function toTokenUsage(usage: GeminiUsageMetadata | undefined): TokenUsage {
  return {
    inputTokens: (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0),
  };
}
