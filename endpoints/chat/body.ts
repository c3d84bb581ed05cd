/** JSON Schema of `POST /v1/chat/completions` (the subset of OpenAI's request the gateway routes). */
import { compileSchema, MAX_TOKEN_COUNT, requiredProperty, requireTaggedProperty, SAFE_INTEGER } from '../validate';

const text = { type: 'string' };
const contentPart = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'image_url', 'input_audio', 'file', 'refusal'] },
    text,
    refusal: text,
    image_url: {
      type: 'object', required: ['url'],
      properties: { url: { type: 'string', minLength: 1 }, detail: { enum: ['auto', 'low', 'high'] } },
      additionalProperties: false,
    },
    input_audio: {
      type: 'object', required: ['data', 'format'],
      properties: { data: { type: 'string' }, format: { type: 'string' } },
      additionalProperties: false,
    },
    file: {
      type: 'object',
      properties: { file_id: { type: 'string' }, filename: { type: 'string' }, file_data: { type: 'string' } },
      anyOf: [requiredProperty('file_id'), requiredProperty('file_data')],
      additionalProperties: false,
    },
  },
  allOf: requireTaggedProperty(['text', 'image_url', 'input_audio', 'file', 'refusal']),
  additionalProperties: false,
};
const content = { anyOf: [{ type: 'string' }, { type: 'array', items: contentPart }] };
const toolCall = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: text,
    type: { const: 'function' },
    function: { type: 'object', required: ['name', 'arguments'], properties: { name: text, arguments: text }, additionalProperties: false },
  },
  additionalProperties: false,
};
const message = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: { anyOf: [content, { type: 'null' }] },
    name: text,
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: text,
    refusal: { type: ['string', 'null'] },
  },
  additionalProperties: false,
};

export const chatCompletionsSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: { type: 'array', minItems: 1, items: message },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } }, additionalProperties: false },
    max_tokens: { type: ['integer', 'null'], minimum: 1, maximum: MAX_TOKEN_COUNT },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1, maximum: MAX_TOKEN_COUNT },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    // OpenAI's own limit; each model's is its catalog record's `n` maximum.
    n: { type: ['integer', 'null'], minimum: 1, maximum: 128 },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }, { type: 'null' }] },
    seed: { type: ['integer', 'null'], ...SAFE_INTEGER },
    presence_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
    frequency_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
    logprobs: { type: ['boolean', 'null'] },
    top_logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 20 },
    logit_bias: {
      type: ['object', 'null'],
      propertyNames: { pattern: '^[0-9]+$' },
      additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
    },
    verbosity: { enum: ['low', 'medium', 'high', null] },
    user: text,
    tools: {
      type: 'array',
      items: {
        type: 'object', required: ['type', 'function'],
        properties: {
          type: { const: 'function' },
          function: {
            type: 'object', required: ['name'],
            properties: { name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' }, description: text, parameters: { type: 'object' }, strict: { type: ['boolean', 'null'] } },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
    },
    tool_choice: {
      anyOf: [
        { enum: ['none', 'auto', 'required'] },
        { type: 'object', required: ['type', 'function'], properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: text }, additionalProperties: false } }, additionalProperties: false },
      ],
    },
    parallel_tool_calls: { type: 'boolean' },
    response_format: {
      type: 'object', required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: {
          type: 'object', required: ['name'],
          properties: { name: text, description: text, schema: { type: 'object' }, strict: { type: ['boolean', 'null'] } },
          additionalProperties: false,
        },
      },
      allOf: requireTaggedProperty(['json_schema']),
      additionalProperties: false,
    },
    metadata: { type: 'object' },
    store: { type: ['boolean', 'null'] },
    reasoning_effort: { enum: ['none', 'minimal', 'low', 'medium', 'high', null] },
    service_tier: { type: ['string', 'null'] },
  },
  additionalProperties: false,
} as const;

export type ChatCompletionBody = {
  model: string;
  messages: Array<Record<string, any>>;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null } }>;
  [key: string]: unknown;
};

export const validateChatCompletionBody = compileSchema<ChatCompletionBody>(chatCompletionsSchema);
