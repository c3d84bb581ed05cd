/**
 * JSON Schema of `POST /v1/messages` (and `/v1/messages/count_tokens`): Anthropic's Messages request as the
 * gateway serves it on every chat model. Anything else is refused with a 400 naming it; content blocks
 * are checked per type (body.ts `checkBlocks`) so an unknown field is named with its full path.
 */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema, MAX_TOKEN_COUNT } from '../validate';

const text = { type: 'string' };
const cacheControl = {
  type: ['object', 'null'],
  required: ['type'],
  properties: { type: { const: 'ephemeral' }, ttl: { enum: ['5m', '1h'] } },
  additionalProperties: false,
};

/** The request's block types; each type's own fields are checked by `checkBlocks`. */
export const BLOCK_KEYS: Record<string, string[]> = {
  text: ['type', 'text', 'cache_control', 'citations'],
  image: ['type', 'source', 'cache_control'],
  document: ['type', 'source', 'title', 'context', 'citations', 'cache_control'],
  // `caller` comes back on tool_use blocks of answers that are sent back as they came.
  tool_use: ['type', 'id', 'name', 'input', 'cache_control', 'caller'],
  tool_result: ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'],
  thinking: ['type', 'thinking', 'signature'],
  redacted_thinking: ['type', 'data'],
};

const SOURCE_KEYS: Record<string, string[]> = {
  base64: ['type', 'media_type', 'data'],
  url: ['type', 'url'],
  text: ['type', 'media_type', 'data'],
};

const source = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: Object.keys(SOURCE_KEYS) }, media_type: text, data: text, url: { type: 'string', minLength: 1 } },
  additionalProperties: false,
};

const block = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: Object.keys(BLOCK_KEYS) },
    text,
    cache_control: cacheControl,
    citations: { type: ['object', 'array', 'null'] },
    source,
    title: { type: ['string', 'null'] },
    context: { type: ['string', 'null'] },
    id: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1 },
    input: { type: 'object' },
    tool_use_id: { type: 'string', minLength: 1 },
    content: { type: ['string', 'array'], items: { type: 'object' } },
    caller: { type: 'object' },
    is_error: { type: 'boolean' },
    thinking: text,
    signature: text,
    data: text,
  },
  additionalProperties: false,
};

const tool = {
  type: 'object',
  required: ['name', 'input_schema'],
  properties: {
    type: { enum: ['custom', null] },
    name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,128}$' },
    description: text,
    input_schema: { type: 'object', required: ['type'], properties: { type: { const: 'object' } } },
    // Tool search loads a deferred tool's definition when needed; here every tool's definition is sent.
    defer_loading: { type: 'boolean' },
    cache_control: cacheControl,
    strict: { type: 'boolean' },
  },
  additionalProperties: false,
};

export const messagesSchema = {
  type: 'object',
  required: ['model', 'messages', 'max_tokens'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role', 'content'],
        // `system` messages: instructions given mid-conversation (text only).
        properties: { role: { enum: ['user', 'assistant', 'system'] }, content: { type: ['string', 'array'], items: block } },
        additionalProperties: false,
      },
    },
    max_tokens: { type: 'integer', minimum: 1, maximum: MAX_TOKEN_COUNT },
    system: { type: ['string', 'array'], items: block },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'], maxLength: 256 } }, additionalProperties: false },
    stop_sequences: { type: 'array', items: text },
    stream: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    tools: { type: 'array', items: tool },
    tool_choice: {
      type: 'object',
      required: ['type'],
      properties: { type: { enum: ['auto', 'any', 'tool', 'none'] }, name: text, disable_parallel_tool_use: { type: 'boolean' } },
      additionalProperties: false,
    },
    thinking: {
      type: 'object',
      required: ['type'],
      properties: { type: { enum: ['enabled', 'disabled', 'adaptive'] }, budget_tokens: { type: 'integer', minimum: 1024 }, display: { enum: ['summarized', 'omitted', null] } },
      additionalProperties: false,
    },
    service_tier: { enum: ['auto', 'standard_only'] },
    output_config: {
      type: 'object',
      properties: {
        effort: { enum: ['low', 'medium', 'high', 'xhigh', 'max', null] },
        format: {
          type: ['object', 'null'], required: ['type', 'schema'],
          properties: { type: { const: 'json_schema' }, schema: { type: 'object' } },
          additionalProperties: false,
        },
      },
      additionalProperties: false,
    },
    cache_control: cacheControl,
    // Clearing old thinking blocks from the context: translated requests carry none.
    context_management: {
      type: 'object',
      properties: { edits: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: text } } } },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

export interface MessagesSource { type: 'base64' | 'url' | 'text'; media_type?: string; data?: string; url?: string }

export interface MessagesBlock {
  type: 'text' | 'image' | 'document' | 'tool_use' | 'tool_result' | 'thinking' | 'redacted_thinking';
  text?: string;
  source?: MessagesSource;
  title?: string | null;
  context?: string | null;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
  tool_use_id?: string;
  content?: string | MessagesBlock[];
  is_error?: boolean;
  thinking?: string;
  signature?: string;
  data?: string;
  cache_control?: { type: 'ephemeral'; ttl?: string } | null;
  [key: string]: unknown;
}

export interface MessagesMessage {
  role: 'user' | 'assistant' | 'system';
  content: string | MessagesBlock[];
}

export interface MessagesTool {
  type?: 'custom' | null;
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: unknown;
  strict?: boolean;
  defer_loading?: boolean;
}

export interface MessagesBody {
  model: string;
  messages: MessagesMessage[];
  max_tokens: number;
  system?: string | MessagesBlock[];
  metadata?: { user_id?: string | null };
  stop_sequences?: string[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: MessagesTool[];
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled' | 'disabled' | 'adaptive'; budget_tokens?: number; display?: string | null };
  service_tier?: 'auto' | 'standard_only';
  output_config?: { effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null; format?: { type: 'json_schema'; schema: Record<string, unknown> } | null };
  cache_control?: unknown;
  context_management?: { edits?: Array<{ type: string }> };
}

/** Anthropic's server tools (run on Anthropic's servers, named by a versioned type). */
function refuseServerTools(raw: Record<string, unknown>): void {
  const tools = Array.isArray(raw.tools) ? raw.tools : [];
  tools.forEach((t, i) => {
    const type = (t as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && type !== 'custom') {
      throw new InvalidRequestError(`tools.${i}.type: the server tool '${type}' is not available through this gateway; define a custom tool (name, description, input_schema) and run it in your code.`, {
        param: `tools.${i}.type`, code: 'unsupported_tool',
      });
    }
  });
}

const schemaCheck = compileSchema<MessagesBody>(messagesSchema);
const countSchemaCheck = compileSchema<Omit<MessagesBody, 'max_tokens'>>({
  ...messagesSchema,
  required: ['model', 'messages'],
  properties: Object.fromEntries(Object.entries(messagesSchema.properties).filter(([key]) => !['max_tokens', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k', 'metadata', 'service_tier', 'cache_control', 'context_management'].includes(key))),
});

function onlyKeys(object: Record<string, unknown>, allowed: string[], param: string, what: string): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) throw new InvalidRequestError(`${param}.${key}: Extra inputs are not permitted (${what} take no '${key}').`, { param: `${param}.${key}`, code: 'unknown_parameter' });
  }
}

function need(value: unknown, param: string): void {
  if (value === undefined || value === null) throw new InvalidRequestError(`${param}: Field required.`, { param, code: 'missing_required_parameter' });
}

function checkBlock(b: MessagesBlock, param: string, where: MessagesMessage['role'] | 'tool_result'): void {
  onlyKeys(b, BLOCK_KEYS[b.type], param, `'${b.type}' blocks`);
  const allowed: Record<typeof where, string[]> = {
    user: ['text', 'image', 'document', 'tool_result'],
    assistant: ['text', 'tool_use', 'thinking', 'redacted_thinking'],
    system: ['text'],
    tool_result: ['text', 'image', 'document'],
  };
  if (!allowed[where].includes(b.type)) {
    throw new InvalidRequestError(`${param}.type: '${b.type}' blocks are not allowed in ${where === 'tool_result' ? 'tool_result content' : `${where} content`} (allowed: ${allowed[where].join(', ')}).`, { param: `${param}.type`, code: 'invalid_value' });
  }
  switch (b.type) {
    case 'text': need(b.text, `${param}.text`); break;
    case 'image':
    case 'document': {
      need(b.source, `${param}.source`);
      const src = b.source!;
      onlyKeys(src as unknown as Record<string, unknown>, SOURCE_KEYS[src.type], `${param}.source`, `'${src.type}' sources`);
      if (src.type === 'url') need(src.url, `${param}.source.url`);
      else { need(src.media_type, `${param}.source.media_type`); need(src.data, `${param}.source.data`); }
      if (b.type === 'image' && src.type === 'text') throw new InvalidRequestError(`${param}.source.type: images take 'base64' or 'url' sources.`, { param: `${param}.source.type`, code: 'invalid_value' });
      if (b.type === 'image' && src.type === 'base64' && !/^image\/(jpeg|png|gif|webp)$/.test(src.media_type!)) {
        throw new InvalidRequestError(`${param}.source.media_type: expected 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'.`, { param: `${param}.source.media_type`, code: 'invalid_value' });
      }
      if (b.type === 'document' && src.type === 'base64' && src.media_type !== 'application/pdf') {
        throw new InvalidRequestError(`${param}.source.media_type: base64 documents are 'application/pdf'.`, { param: `${param}.source.media_type`, code: 'invalid_value' });
      }
      break;
    }
    case 'tool_use': need(b.id, `${param}.id`); need(b.name, `${param}.name`); need(b.input, `${param}.input`); break;
    case 'tool_result':
      need(b.tool_use_id, `${param}.tool_use_id`);
      if (Array.isArray(b.content)) b.content.forEach((c, k) => checkBlock(c, `${param}.content.${k}`, 'tool_result'));
      break;
    case 'thinking': need(b.thinking, `${param}.thinking`); need(b.signature, `${param}.signature`); break;
    case 'redacted_thinking': need(b.data, `${param}.data`); break;
  }
}

/** Every block of the body, checked for its type's fields and where it may appear. */
function checkBlocks(body: Omit<MessagesBody, 'max_tokens'>): void {
  if (Array.isArray(body.system)) body.system.forEach((b, j) => checkBlock(b, `system.${j}`, 'system'));
  body.messages.forEach((m, i) => {
    if (Array.isArray(m.content)) m.content.forEach((b, j) => checkBlock(b, `messages.${i}.content.${j}`, m.role));
  });
  if (body.tool_choice?.type === 'tool' && !body.tool_choice.name) need(undefined, 'tool_choice.name');
  if (body.tool_choice && body.tool_choice.type !== 'tool' && body.tool_choice.name !== undefined) {
    throw new InvalidRequestError("tool_choice.name: only tool_choice of type 'tool' names a tool.", { param: 'tool_choice.name', code: 'unknown_parameter' });
  }
  if (body.thinking?.type === 'enabled') need(body.thinking.budget_tokens, 'thinking.budget_tokens');
  if (body.thinking && body.thinking.type !== 'enabled' && body.thinking.budget_tokens !== undefined) {
    throw new InvalidRequestError(`thinking.budget_tokens: only thinking of type 'enabled' takes a budget.`, { param: 'thinking.budget_tokens', code: 'unknown_parameter' });
  }
}

export function validateMessagesBody(raw: unknown): MessagesBody {
  if (raw && typeof raw === 'object') refuseServerTools(raw as Record<string, unknown>);
  const body = schemaCheck(raw);
  checkBlocks(body);
  if (body.thinking?.type === 'enabled' && body.thinking.budget_tokens! >= body.max_tokens) {
    throw new InvalidRequestError('`max_tokens` must be greater than `thinking.budget_tokens`.', { param: 'thinking.budget_tokens', code: 'invalid_value' });
  }
  return body;
}

/** `count_tokens` takes the request without the generation settings. */
export function validateCountTokensBody(raw: unknown): Omit<MessagesBody, 'max_tokens'> {
  if (raw && typeof raw === 'object') refuseServerTools(raw as Record<string, unknown>);
  const body = countSchemaCheck(raw);
  checkBlocks(body);
  return body;
}
