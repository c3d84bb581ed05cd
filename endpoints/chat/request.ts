/**
 * The chat completions request as the gateway routes it: which parts are model-specific parameters
 * (checked against the catalog's allowedParams), what the request needs from a model's capabilities, and
 * its translation to the adapters' canonical ChatRequest.
 */
import type { ModelRecord } from '../../catalog/types';
import type { ChatCompletionBody } from './body';
import type { ChatContentPart, ChatMessage, ChatRequest, ChatResponseFormat, ChatToolChoice } from '../../providers/types';
import { InvalidRequestError } from '../../core/errors';

/** Fields every chat model takes; everything else is checked against the model's allowedParams. */
const UNIVERSAL_FIELDS = new Set(['model', 'messages', 'stream', 'stream_options', 'metadata', 'store', 'service_tier']);

/**
 * The optional, model-specific parameters a request carries. Null values count as absent, and so do
 * `n: 1` and `logprobs: false`, which every model serves.
 */
export function chatModelParams(body: ChatCompletionBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (UNIVERSAL_FIELDS.has(key) || value === null || value === undefined || (key === 'n' && value === 1) || (key === 'logprobs' && value === false)) continue;
    if (key === 'response_format') params[key] = (value as { type: string }).type;
    else if (key === 'tool_choice') params[key] = typeof value === 'string' ? value : 'function';
    else params[key] = value;
  }
  return params;
}

function parts(content: unknown): ChatContentPart[] {
  return Array.isArray(content) ? (content as ChatContentPart[]) : [];
}

export interface ChatNeeds {
  audioInput: boolean;
  vision: boolean;
  files: boolean;
  tools: boolean;
  jsonMode: boolean;
  streaming: boolean;
}

export function chatNeeds(body: ChatCompletionBody): ChatNeeds {
  const all = body.messages.flatMap((m) => parts(m.content));
  const format = (body.response_format as { type?: string } | undefined)?.type;
  return {
    audioInput: all.some((p) => p.type === 'input_audio'),
    vision: all.some((p) => p.type === 'image_url'),
    files: all.some((p) => p.type === 'file'),
    tools: Boolean(body.tools?.length),
    jsonMode: format === 'json_object' || format === 'json_schema',
    streaming: Boolean(body.stream),
  };
}

/**
 * Refuses a request the model cannot serve, with the error a client can act on. Used for the requested
 * model (the client sees it) and for each fallback model (which is then skipped).
 */
export function checkChatCapabilities(record: ModelRecord, needs: ChatNeeds): void {
  const caps = record.capabilities;
  if (needs.audioInput && !caps.audioInput) {
    throw new InvalidRequestError(`Model '${record.slug}' does not accept audio input. Transcribe the audio first (POST /v1/audio/transcriptions) and send the text.`, { code: 'audio_not_supported_by_model', param: 'messages' });
  }
  if (needs.vision && !caps.vision) {
    throw new InvalidRequestError(`Model '${record.slug}' does not accept image input.`, { code: 'image_not_supported_by_model', param: 'messages' });
  }
  if (needs.tools && !caps.tools) {
    throw new InvalidRequestError(`Model '${record.slug}' does not support tools.`, { code: 'tools_not_supported_by_model', param: 'tools' });
  }
  if (needs.jsonMode && !caps.jsonMode) {
    throw new InvalidRequestError(`Model '${record.slug}' does not support JSON mode.`, { code: 'json_mode_not_supported_by_model', param: 'response_format' });
  }
  if (needs.streaming && !caps.streaming) {
    throw new InvalidRequestError(`Model '${record.slug}' does not support streaming.`, { code: 'streaming_not_supported_by_model', param: 'stream' });
  }
}

/** Checks between parameters that OpenAI makes too (whatever the model). */
export function checkChatParams(body: ChatCompletionBody): void {
  if (typeof body.top_logprobs === 'number' && body.logprobs !== true) {
    throw new InvalidRequestError("'top_logprobs' needs 'logprobs' set to true.", { param: 'top_logprobs', code: 'invalid_value' });
  }
}

/** How many choices the request asks for. */
export function choiceCount(body: ChatCompletionBody): number {
  return typeof body.n === 'number' && body.n > 1 ? body.n : 1;
}

/** Characters of prompt text (for the reservation estimate before any tokenizer ran). */
export function promptCharacters(body: ChatCompletionBody): number {
  let chars = 0;
  for (const m of body.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    for (const p of parts(m.content)) {
      if (p.type === 'text') chars += p.text.length;
      // Images and audio are billed by providers as tokens too; a flat allowance keeps the estimate honest.
      else if (p.type === 'image_url') chars += 3000;
      else if (p.type === 'input_audio') chars += Math.ceil(p.input_audio.data.length / 50);
      else if (p.type === 'file') chars += Math.ceil((p.file.file_data?.length ?? 20_000) / 2);
    }
    for (const call of (m.tool_calls as Array<{ function: { arguments: string; name: string } }> | undefined) ?? []) {
      chars += call.function.arguments.length + call.function.name.length;
    }
  }
  for (const tool of body.tools ?? []) chars += JSON.stringify(tool).length;
  return chars;
}

export function requestedMaxTokens(body: ChatCompletionBody): number | undefined {
  return body.max_completion_tokens ?? body.max_tokens ?? undefined;
}

/** Translates the validated OpenAI body into the adapters' canonical request. */
export function toChatRequest(body: ChatCompletionBody, record: ModelRecord): ChatRequest {
  const maxTokens = requestedMaxTokens(body);
  const stop = typeof body.stop === 'string' ? [body.stop] : (body.stop as string[] | null | undefined) ?? undefined;
  return {
    messages: body.messages as ChatMessage[],
    tools: body.tools?.map((t) => ({ type: 'function', function: { ...t.function, strict: t.function.strict ?? undefined } })),
    toolChoice: (body.tool_choice as ChatToolChoice | undefined) ?? undefined,
    parallelToolCalls: body.parallel_tool_calls as boolean | undefined,
    responseFormat: body.response_format as ChatResponseFormat | undefined,
    maxTokens: maxTokens ?? undefined,
    temperature: num(body.temperature),
    topP: num(body.top_p),
    stop,
    seed: num(body.seed),
    presencePenalty: num(body.presence_penalty),
    frequencyPenalty: num(body.frequency_penalty),
    user: typeof body.user === 'string' ? body.user : undefined,
    ...(body.logprobs != null ? { logprobs: body.logprobs as boolean } : {}),
    ...(typeof body.top_logprobs === 'number' ? { topLogprobs: body.top_logprobs } : {}),
    ...(body.logit_bias != null ? { logitBias: body.logit_bias as Record<string, number> } : {}),
    ...(typeof body.reasoning_effort === 'string' ? { reasoningEffort: body.reasoning_effort } : {}),
    ...(typeof body.verbosity === 'string' ? { verbosity: body.verbosity } : {}),
    ...(record.maxOutputTokens && maxTokens && maxTokens > record.maxOutputTokens ? { maxTokens: record.maxOutputTokens } : {}),
  };
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
