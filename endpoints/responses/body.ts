/**
 * JSON Schema of `POST /v1/responses`: the part of OpenAI's Responses request the gateway serves on every
 * chat model. Anything else is refused with a 400 naming it (never silently dropped); built-in tools and
 * input item types that only OpenAI's own servers can run get a message saying so.
 */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema, MAX_TOKEN_COUNT } from '../validate';

/** The input items the gateway takes (everything else is produced or run by OpenAI's own servers). */
const INPUT_ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'item_reference'];

const text = { type: 'string' };
const nullableText = { type: ['string', 'null'] };
const functionName = { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' };

/** Content parts of input messages (input_*) and of assistant messages passed back (output_text, refusal). */
const contentPart = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['input_text', 'input_image', 'input_file', 'output_text', 'refusal'] },
    text,
    image_url: nullableText,
    file_id: nullableText,
    file_data: text,
    file_url: text,
    filename: text,
    detail: { enum: ['auto', 'low', 'high', null] },
    annotations: { type: 'array' },
    logprobs: { type: 'array' },
    refusal: text,
  },
  additionalProperties: false,
};
const content = { anyOf: [{ type: 'string' }, { type: 'array', items: contentPart }] };

/** One input item: a message (with or without `type`), a function call, its output, or a reference to a stored item. */
const inputItem = {
  type: 'object',
  properties: {
    type: { enum: INPUT_ITEM_TYPES },
    id: nullableText,
    status: { enum: ['in_progress', 'completed', 'incomplete', null] },
    role: { enum: ['user', 'assistant', 'system', 'developer'] },
    content,
    call_id: text,
    name: text,
    arguments: text,
    output: content,
  },
  additionalProperties: false,
};

const functionTool = {
  type: 'object',
  required: ['type', 'name'],
  properties: {
    type: { const: 'function' },
    name: functionName,
    description: nullableText,
    parameters: { type: ['object', 'null'] },
    strict: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
};

const textFormat = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    name: functionName,
    description: text,
    schema: { type: 'object' },
    strict: { type: ['boolean', 'null'] },
  },
  additionalProperties: false,
};

export const responsesSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { anyOf: [{ type: 'string' }, { type: 'array', items: inputItem }] },
    instructions: nullableText,
    previous_response_id: nullableText,
    tools: { type: 'array', items: functionTool },
    tool_choice: {
      anyOf: [
        { enum: ['none', 'auto', 'required'] },
        { type: 'object', required: ['type', 'name'], properties: { type: { const: 'function' }, name: text }, additionalProperties: false },
      ],
    },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    text: {
      type: 'object',
      properties: { format: textFormat, verbosity: { enum: ['low', 'medium', 'high', null] } },
      additionalProperties: false,
    },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1, maximum: MAX_TOKEN_COUNT },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    reasoning: {
      type: ['object', 'null'],
      properties: {
        effort: { enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', null] },
        summary: { enum: ['auto', 'concise', 'detailed', null] },
        generate_summary: { enum: ['auto', 'concise', 'detailed', null] },
      },
      additionalProperties: false,
    },
    metadata: {
      type: ['object', 'null'],
      maxProperties: 16,
      propertyNames: { type: 'string', maxLength: 64 },
      additionalProperties: { type: 'string', maxLength: 512 },
    },
    user: text,
    store: { type: ['boolean', 'null'] },
    stream: { type: ['boolean', 'null'] },
    // Obfuscation pads deltas against side channels; the gateway's deltas carry no padding either way.
    stream_options: { type: ['object', 'null'], properties: { include_obfuscation: { type: 'boolean' } }, additionalProperties: false },
    include: { type: ['array', 'null'], items: { type: 'string' } },
    truncation: { enum: ['auto', 'disabled', null] },
    background: { type: ['boolean', 'null'] },
    service_tier: { type: ['string', 'null'] },
  },
  additionalProperties: false,
} as const;

export type ResponsesContentPart = {
  type: 'input_text' | 'input_image' | 'input_file' | 'output_text' | 'refusal';
  text?: string;
  image_url?: string | null;
  file_id?: string | null;
  file_data?: string;
  file_url?: string;
  filename?: string;
  detail?: 'auto' | 'low' | 'high' | null;
  refusal?: string;
  [key: string]: unknown;
};

export interface ResponsesInputItem {
  type?: 'message' | 'function_call' | 'function_call_output' | 'item_reference';
  id?: string | null;
  status?: string | null;
  role?: 'user' | 'assistant' | 'system' | 'developer';
  content?: string | ResponsesContentPart[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string | ResponsesContentPart[];
}

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean | null };

export interface ResponsesBody {
  model: string;
  input: string | ResponsesInputItem[];
  instructions?: string | null;
  previous_response_id?: string | null;
  tools?: ResponsesFunctionTool[];
  tool_choice?: 'none' | 'auto' | 'required' | { type: 'function'; name: string };
  parallel_tool_calls?: boolean | null;
  text?: { format?: ResponsesTextFormat; verbosity?: 'low' | 'medium' | 'high' | null };
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  reasoning?: { effort?: string | null; summary?: string | null; generate_summary?: string | null } | null;
  metadata?: Record<string, string> | null;
  user?: string;
  store?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_obfuscation?: boolean } | null;
  include?: string[] | null;
  truncation?: 'auto' | 'disabled' | null;
  background?: boolean | null;
  service_tier?: string | null;
}

/** OpenAI's built-in tools: they run on OpenAI's servers, which no model behind the gateway has. */
const BUILT_IN_TOOLS = new Set([
  'web_search', 'web_search_preview', 'web_search_preview_2025_03_11', 'web_search_2025_08_26', 'file_search', 'code_interpreter',
  'computer_use', 'computer_use_preview', 'image_generation', 'mcp', 'local_shell', 'shell', 'apply_patch', 'custom', 'tool_search',
]);

const schemaCheck = compileSchema<ResponsesBody>(responsesSchema);

/** `include` values that change nothing here: images are always kept, and no model returns encrypted reasoning. */
export const HARMLESS_INCLUDES = new Set(['message.input_image.image_url', 'reasoning.encrypted_content']);

/**
 * Built-in tools, hosted tool choices and input items only OpenAI's servers produce (reasoning, tool calls
 * of built-in tools) are named in their 400 before the schema's generic messages could hide them.
 */
function refuseServerSideFeatures(body: Record<string, unknown>): void {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  tools.forEach((tool, i) => {
    const type = (tool as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type !== 'function') {
      const what = BUILT_IN_TOOLS.has(type) ? `The built-in tool '${type}' is` : `Tools of type '${type}' are`;
      throw new InvalidRequestError(`${what} not supported by this gateway: only function tools are. Define the tool as a function tool and run it in your code.`, {
        param: `tools[${i}].type`, code: 'unsupported_tool',
      });
    }
  });
  const choice = body.tool_choice as { type?: unknown } | undefined;
  if (choice && typeof choice === 'object' && typeof choice.type === 'string' && choice.type !== 'function') {
    throw new InvalidRequestError(`tool_choice of type '${choice.type}' is not supported by this gateway: use 'none', 'auto', 'required' or {"type": "function", "name": ...}.`, {
      param: 'tool_choice', code: 'unsupported_tool',
    });
  }
  const input = Array.isArray(body.input) ? body.input : [];
  input.forEach((item, i) => {
    const type = (item as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && !INPUT_ITEM_TYPES.includes(type)) {
      throw new InvalidRequestError(`Input items of type '${type}' are not supported by this gateway: send messages, function_call and function_call_output items.`, {
        param: `input[${i}].type`, code: 'unsupported_input_item',
      });
    }
  });
}

/** Valid OpenAI values whose feature the gateway does not have: refused rather than ignored. */
function refuseUnavailableOptions(body: ResponsesBody): void {
  const refuse = (param: string, message: string) => {
    throw new InvalidRequestError(`${message} Leave '${param}' out.`, { param, code: 'unsupported_parameter' });
  };
  if (body.reasoning?.summary != null) refuse('reasoning.summary', 'Reasoning summaries are not available through this gateway.');
  if (body.reasoning?.generate_summary != null) refuse('reasoning.generate_summary', 'Reasoning summaries are not available through this gateway.');
  if (body.background) refuse('background', 'Background responses are not available through this gateway; stream the response instead.');
  if (body.truncation === 'auto') refuse('truncation', "Automatic truncation is not available through this gateway: a conversation longer than the model's context window is refused.");
  (body.include ?? []).forEach((value, i) => {
    if (!HARMLESS_INCLUDES.has(value)) refuse(`include[${i}]`, `'${value}' cannot be included by this gateway.`);
  });
}

export function validateResponsesBody(raw: unknown): ResponsesBody {
  if (raw && typeof raw === 'object') refuseServerSideFeatures(raw as Record<string, unknown>);
  const body = schemaCheck(raw);
  refuseUnavailableOptions(body);
  return body;
}
