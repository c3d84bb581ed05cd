/**
 * OpenAI's Response object built from a chat answer: the assistant's text as a `message` output item, each
 * tool call as a `function_call` item, the usage in Responses terms, and the request's settings echoed as
 * OpenAI echoes them. The streamed and the plain answer build the same object here.
 */
import type { Knex } from 'knex';
import { InternalError } from '../../core/errors';
import { saveResponse, type ResponseItem } from '../../domain/responses';
import type { ChatToolCall, FinishReason, TokenUsage } from '../../providers/types';
import { responseIds } from './items';
import type { ResponsesRequest } from './request';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseObject extends Record<string, unknown> {
  id: string;
  object: 'response';
  model: string;
  status: ResponseStatus;
  output: ResponseItem[];
  previous_response_id: string | null;
  credits_used?: number;
}

export function usageOf(usage: TokenUsage) {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Why an answer is incomplete, in OpenAI's words (null: it is complete). */
export function incompleteReason(finishReason: FinishReason | null): 'max_output_tokens' | 'content_filter' | null {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return null;
}

type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** One output item as it is being made: the assistant's text, or one tool call. */
export type OutputEntry =
  | { kind: 'message'; id: string; text: string }
  | { kind: 'function_call'; id: string; callId: string; name: string; arguments: string };

export function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function outputItem(entry: OutputEntry, status: ItemStatus): ResponseItem {
  if (entry.kind === 'message') {
    return { id: entry.id, type: 'message', status, role: 'assistant', content: status === 'in_progress' ? [] : [outputText(entry.text)] };
  }
  return { id: entry.id, type: 'function_call', status, call_id: entry.callId, name: entry.name, arguments: entry.arguments };
}

/** A finished chat answer's output entries: its text (when it has any), then its tool calls. */
export function answerEntries(requestId: string, answer: { content: string | null; toolCalls: ChatToolCall[] }): OutputEntry[] {
  const ids = responseIds(requestId);
  const entries: OutputEntry[] = answer.content !== null ? [{ kind: 'message', id: ids.output('msg', 0), text: answer.content }] : [];
  for (const call of answer.toolCalls) {
    entries.push({ kind: 'function_call', id: ids.output('fc', entries.length), callId: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return entries;
}

/** The response object; `usage` null while it is still being made. */
export function responseObject(req: ResponsesRequest, o: {
  id: string; createdAt: number; model: string; status: ResponseStatus; output: ResponseItem[];
  usage: TokenUsage | null; finishReason: FinishReason | null; error?: { code: string; message: string };
}): ResponseObject {
  const { body } = req;
  const reason = incompleteReason(o.finishReason);
  return {
    id: o.id,
    object: 'response',
    created_at: o.createdAt,
    status: o.status,
    background: false,
    error: o.error ?? null,
    incomplete_details: o.status === 'incomplete' && reason ? { reason } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: o.model,
    output: o.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: null },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? null })),
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: o.usage ? usageOf(o.usage) : null,
    metadata: body.metadata ?? {},
    ...(body.user !== undefined ? { user: body.user } : {}),
    ...(o.status === 'completed' ? { completed_at: Math.floor(Date.now() / 1000) } : {}),
  };
}

/** The status a finished answer has: incomplete when it was cut at the token limit or filtered. */
export function finishedStatus(finishReason: FinishReason | null): 'completed' | 'incomplete' {
  return incompleteReason(finishReason) ? 'incomplete' : 'completed';
}

/** Keeps the response and its conversation items when the request asked for it (`store`, default true). */
export async function keepResponse(db: Knex | undefined, workspaceId: string | undefined, req: ResponsesRequest, response: ResponseObject): Promise<void> {
  if (req.body.store === false) return;
  if (!db || !workspaceId) throw new InternalError('storing a response needs the workspace of the request');
  await saveResponse(db, { workspaceId, response, inputItems: req.input, outputItems: response.output });
}
