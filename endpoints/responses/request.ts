/**
 * A Responses request as the request workflow carries it, and its translation to the chat request every
 * chat adapter already serves: instructions become a system message, the conversation's items become chat
 * messages (function calls join the assistant turn, their outputs become tool messages), and the
 * Responses parameters take their chat names (so the catalog's allowedParams judge them the same way).
 */
import { rewordParams } from '../param-names';
import type { Knex } from 'knex';
import { InvalidRequestError } from '../../core/errors';
import { conversationItems, findItems, itemNotFound, responseNotFound, type ResponseItem } from '../../domain/responses';
import type { ChatCompletionBody } from '../chat/body';
import { ownFiles } from '../chat/file-references';
import type { ResponsesBody, ResponsesContentPart } from './body';
import { inputItems, itemFileIds, itemReferences } from './items';

export interface ResponsesRequest {
  /** The validated body, less its `input` (carried as items below). */
  body: Omit<ResponsesBody, 'input'>;
  /** The conversation before this request (`previous_response_id`), oldest item first. */
  history: ResponseItem[];
  /** This request's input as items with ids, item references resolved. */
  input: ResponseItem[];
}

/**
 * Resolves what the body names in the workspace's stores: the previous response's conversation, referenced
 * items and uploaded files. Anything missing, or another workspace's, is a 404 before any workflow starts.
 */
export async function prepareResponsesRequest(db: Knex, workspaceId: string, requestId: string, body: ResponsesBody): Promise<ResponsesRequest> {
  const { input, ...rest } = body;
  let history: ResponseItem[] = [];
  if (body.previous_response_id) {
    const items = await conversationItems(db, workspaceId, body.previous_response_id);
    if (!items) throw responseNotFound(body.previous_response_id, 'previous_response_id');
    history = items;
  }
  const refs = itemReferences(input);
  const stored = await findItems(db, workspaceId, refs.map((r) => r.id));
  for (const ref of refs) if (!stored.has(ref.id)) throw itemNotFound(ref.id, ref.param);
  const items = inputItems(input, requestId, stored);
  if (history.length + items.length === 0) throw new InvalidRequestError("'input' must hold at least one item.", { param: 'input', code: 'invalid_value' });
  await ownFiles(db, workspaceId, [
    ...itemFileIds(history, () => 'previous_response_id'),
    ...itemFileIds(items, (i, j) => `input[${i}].content[${j}].file_id`),
  ]);
  return { body: rest, history, input: items };
}

type ChatMessageBody = Record<string, any>;

function chatPart(part: ResponsesContentPart): Record<string, unknown> {
  switch (part.type) {
    case 'input_image':
      return part.file_id
        ? { type: 'file', file: { file_id: part.file_id } }
        : { type: 'image_url', image_url: { url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) } };
    case 'input_file':
      return { type: 'file', file: part.file_id ? { file_id: part.file_id, ...(part.filename ? { filename: part.filename } : {}) } : { filename: part.filename, file_data: part.file_data } };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    default:
      return { type: 'text', text: part.text };
  }
}

function textOf(parts: ResponsesContentPart[]): string {
  return parts.map((p) => (p.type === 'refusal' ? p.refusal : p.text) ?? '').join('');
}

/** Appends one conversation item to the chat messages. */
function appendItem(messages: ChatMessageBody[], item: ResponseItem): void {
  const last = messages[messages.length - 1];
  switch (item.type) {
    case 'function_call': {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      // Calls made in one turn belong to that turn's assistant message.
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      return;
    }
    case 'function_call_output':
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
      return;
    default: {
      const parts = item.content as ResponsesContentPart[];
      const role = item.role as string;
      // A user's several parts stay parts; everything else travels as a string, which every adapter takes for every role.
      if (role === 'user' && (parts.length !== 1 || parts[0].type !== 'input_text')) messages.push({ role, content: parts.map(chatPart) });
      else messages.push({ role, content: textOf(parts) });
    }
  }
}

function definedOnly<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

/** The chat completions body that asks the model the same thing. */
export function toChatBody(req: ResponsesRequest): ChatCompletionBody {
  const { body } = req;
  const messages: ChatMessageBody[] = body.instructions ? [{ role: 'system', content: body.instructions }] : [];
  for (const item of [...req.history, ...req.input]) appendItem(messages, item);
  const format = body.text?.format;
  const choice = body.tool_choice;
  return {
    model: body.model,
    messages,
    ...definedOnly({
      stream: body.stream,
      tools: body.tools?.length
        ? body.tools.map((t) => ({ type: 'function' as const, function: definedOnly({ name: t.name, description: t.description, parameters: t.parameters, strict: t.strict }) as { name: string } }))
        : undefined,
      tool_choice: typeof choice === 'object' ? { type: 'function', function: { name: choice.name } } : choice,
      parallel_tool_calls: body.parallel_tool_calls,
      response_format: format?.type === 'json_schema'
        ? { type: 'json_schema', json_schema: definedOnly({ name: format.name, description: format.description, schema: format.schema, strict: format.strict }) }
        : format?.type === 'json_object' ? { type: 'json_object' } : undefined,
      max_completion_tokens: body.max_output_tokens,
      temperature: body.temperature,
      top_p: body.top_p,
      user: body.user,
      reasoning_effort: body.reasoning?.effort,
      verbosity: body.text?.verbosity,
    }),
  };
}

/** Whether any message of the conversation holds an image (by URL or by file id). */
export function holdsImages(req: ResponsesRequest): boolean {
  return [...req.history, ...req.input].some((item) => item.type === 'message' && (item.content as ResponsesContentPart[]).some((p) => p.type === 'input_image'));
}

/** The chat parameter names a Responses client knows by other names. */
const RESPONSES_NAMES: Record<string, string> = {
  messages: 'input',
  max_completion_tokens: 'max_output_tokens',
  reasoning_effort: 'reasoning.effort',
  response_format: 'text.format',
  verbosity: 'text.verbosity',
};

/** A refusal worded for the chat request, reworded in the Responses request's own parameter names. */
export function inResponsesTerms(err: unknown): unknown {
  return rewordParams(err, RESPONSES_NAMES);
}
