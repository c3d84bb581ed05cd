/**
 * A Messages request as the chat request every chat adapter serves (as endpoints/responses/request.ts
 * does for Responses): the system prompt becomes a system message, tool_use blocks join the assistant turn
 * as tool calls, tool_result blocks become tool messages, images and documents become content parts, and
 * the Messages parameters take their chat names (so the catalog's allowedParams judge them). Thinking
 * blocks carried back and `cache_control` hints have no chat form and are left out; what a model cannot
 * serve (thinking on a model without reasoning, `top_k`) is refused in the Messages request's own terms.
 */
import { rewordParams } from '../param-names';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError } from '../../core/errors';
import type { ChatCompletionBody } from '../chat/body';
import type { MessagesBlock, MessagesBody } from './body';

type ChatMessageBody = Record<string, any>;

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

function unsupported(param: string, message: string): InvalidRequestError {
  return new InvalidRequestError(message, { param, code: 'unsupported_parameter' });
}

/** Anthropic's own models are sent the client's request as it came; every other model its chat translation. */
export function servesNatively(record: ModelRecord | undefined): boolean {
  return record?.provider === 'anthropic';
}

/** A Messages request as the request workflow carries it: the validated body and the client's `anthropic-beta` flags. */
export interface MessagesRequest {
  body: MessagesBody;
  beta: string | null;
}

/** What the chat request carries for an Anthropic model: the client's own request (see providers/types.ts). */
export function nativeRequest(req: MessagesRequest, record: ModelRecord): { anthropicMessages?: { body: Record<string, unknown>; beta: string | null } } {
  return servesNatively(record) ? { anthropicMessages: { body: req.body as unknown as Record<string, unknown>, beta: req.beta } } : {};
}

/** An image or document block as a chat content part. */
function mediaPart(b: MessagesBlock, param: string, native: boolean): Record<string, unknown> {
  const src = b.source!;
  if (b.type === 'image') return { type: 'image_url', image_url: { url: src.type === 'url' ? src.url : dataUrl(src.media_type!, src.data!) } };
  if (src.type === 'text') return { type: 'text', text: b.title ? `${b.title}\n\n${src.data}` : src.data };
  if (src.type === 'url') {
    if (native) return { type: 'file', file: { filename: b.title ?? src.url } };
    throw unsupported(`${param}.source`, `${param}.source: documents by URL are read by Anthropic models only; send the PDF as a base64 source.`);
  }
  return { type: 'file', file: { filename: b.title ?? 'document.pdf', file_data: dataUrl(src.media_type!, src.data!) } };
}

/** A tool_result's content as the tool message's text (images and documents have no place in a tool message). */
function toolResultText(b: MessagesBlock, param: string, native: boolean): string {
  const content = b.content ?? '';
  const textOf = typeof content === 'string' ? content : content.map((c, k) => {
    if (c.type !== 'text' && native) return '';
    if (c.type !== 'text') throw unsupported(`${param}.content.${k}`, `${param}.content.${k}: '${c.type}' blocks in a tool_result are read by Anthropic models only; send the tool's output as text.`);
    return c.text ?? '';
  }).join('\n');
  return b.is_error ? `Error: ${textOf}` : textOf;
}

function userMessages(content: string | MessagesBlock[], param: string, native: boolean): ChatMessageBody[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: ChatMessageBody[] = [];
  const parts: Record<string, unknown>[] = [];
  content.forEach((b, j) => {
    const where = `${param}.${j}`;
    if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: toolResultText(b, where, native) });
    else if (b.type === 'text') parts.push({ type: 'text', text: b.text });
    else parts.push(mediaPart(b, where, native));
  });
  // Tool results answer the assistant's calls; the user's own words follow them.
  if (parts.length > 0) out.push({ role: 'user', content: parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts });
  return out;
}

function assistantMessage(content: string | MessagesBlock[]): ChatMessageBody {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts = content.filter((b) => b.type === 'text').map((b) => b.text ?? '');
  const calls = content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
  return { role: 'assistant', content: texts.length > 0 ? texts.join('') : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

function systemText(system: MessagesBody['system']): string | null {
  if (system === undefined) return null;
  const textOf = typeof system === 'string' ? system : system.map((b) => b.text ?? '').join('\n\n');
  return textOf === '' ? null : textOf;
}

/**
 * Thinking as OpenAI's reasoning effort: an `enabled` budget by its size, `adaptive` at the requested effort
 * (`output_config.effort`, else medium). Adaptive thinking lets the model decide whether to think, so a
 * model that cannot reason serves it without; an `enabled` budget it cannot serve is refused (by its
 * allowedParams). No thinking asked, no reasoning effort (`output_config.effort` alone changes nothing).
 */
export function reasoningEffortOf(body: Pick<MessagesBody, 'thinking' | 'output_config'>, record?: ModelRecord): 'low' | 'medium' | 'high' | undefined {
  const thinking = body.thinking;
  if (!thinking || thinking.type === 'disabled') return undefined;
  if (thinking.type === 'adaptive' && record && !record.allowedParams.reasoning_effort) return undefined;
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens!;
    return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
  }
  const effort = body.output_config?.effort;
  return effort === 'low' || effort === 'medium' ? effort : effort ? 'high' : 'medium';
}

function definedOnly<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

/**
 * The chat completions body that asks `record` the same thing. `max_tokens` is a bound, so one above the
 * model's longest answer asks for that (Claude Code asks every model for 32000).
 */
export function toChatBody(body: Omit<MessagesBody, 'max_tokens'> & { max_tokens?: number }, record?: ModelRecord): ChatCompletionBody {
  // For an Anthropic model the chat body is what the checks and the reservation read; the request itself goes as it came.
  const native = servesNatively(record);
  const system = systemText(body.system);
  const messages: ChatMessageBody[] = system !== null ? [{ role: 'system', content: system }] : [];
  body.messages.forEach((m, i) => {
    if (m.role === 'user') messages.push(...userMessages(m.content, `messages.${i}.content`, native));
    else if (m.role === 'system') messages.push({ role: 'system', content: systemText(m.content) ?? '' });
    else messages.push(assistantMessage(m.content));
  });
  if (body.top_k !== undefined && !native) throw unsupported('top_k', "top_k: this model does not take 'top_k'; it is served by Anthropic models only.");
  const choice = body.tool_choice;
  const toolChoice = choice === undefined ? undefined
    : choice.type === 'any' ? 'required' : choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
  return {
    model: body.model,
    messages,
    ...definedOnly({
      stream: body.stream,
      tools: body.tools?.length
        ? body.tools.map((t) => ({ type: 'function' as const, function: definedOnly({ name: t.name, description: t.description, parameters: t.input_schema, strict: t.strict }) as { name: string } }))
        : undefined,
      tool_choice: toolChoice,
      parallel_tool_calls: choice?.disable_parallel_tool_use ? false : undefined,
      max_tokens: body.max_tokens !== undefined && record?.maxOutputTokens ? Math.min(body.max_tokens, record.maxOutputTokens) : body.max_tokens,
      temperature: body.temperature,
      top_p: body.top_p,
      stop: body.stop_sequences?.length ? body.stop_sequences : undefined,
      user: body.metadata?.user_id ?? undefined,
      reasoning_effort: native ? undefined : reasoningEffortOf(body, record),
      response_format: body.output_config?.format && !native ? { type: 'json_schema', json_schema: { name: 'output', schema: body.output_config.format.schema } } : undefined,
    }),
  };
}

/** The chat parameter names a Messages client knows by other names. */
const MESSAGES_NAMES: Record<string, string> = {
  reasoning_effort: 'thinking',
  stop: 'stop_sequences',
  tool_choice: 'tool_choice',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
  user: 'metadata.user_id',
  response_format: 'output_config.format',
};

/** A refusal worded for the chat request, reworded in the Messages request's own parameter names. */
export function inMessagesTerms(err: unknown): unknown {
  return rewordParams(err, MESSAGES_NAMES);
}
