/**
 * JSON Schema of the legacy `POST /v1/completions`. Every chat model serves it: each prompt is sent as one
 * user message (endpoints/completions/handler.ts), so the fields are OpenAI's, minus what a chat model
 * cannot do (token-id prompts, `suffix` insertion, `best_of` re-ranking), which are refused by name.
 */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema, MAX_TOKEN_COUNT, SAFE_INTEGER } from '../validate';

/** OpenAI's default answer length on this endpoint. */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

const tokenIds = { type: 'array', items: { type: 'integer' } };

export const completionsSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { anyOf: [{ type: 'string' }, { type: 'integer' }, tokenIds] } }] },
    best_of: { type: ['integer', 'null'], minimum: 1, maximum: 20 },
    echo: { type: ['boolean', 'null'] },
    frequency_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
    logit_bias: { type: ['object', 'null'], propertyNames: { pattern: '^[0-9]+$' }, additionalProperties: { type: 'number', minimum: -100, maximum: 100 } },
    logprobs: { type: ['integer', 'null'], minimum: 0, maximum: 5 },
    max_tokens: { type: ['integer', 'null'], minimum: 1, maximum: MAX_TOKEN_COUNT },
    n: { type: ['integer', 'null'], minimum: 1, maximum: 128 },
    presence_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
    seed: { type: ['integer', 'null'], ...SAFE_INTEGER },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }, { type: 'null' }] },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'] },
    suffix: { type: ['string', 'null'] },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export interface CompletionBody {
  model: string;
  prompt: string | string[];
  best_of?: number | null;
  echo?: boolean | null;
  frequency_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: number | null;
  max_tokens?: number | null;
  n?: number | null;
  presence_penalty?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  suffix?: string | null;
  temperature?: number | null;
  top_p?: number | null;
  user?: string;
}

const validate = compileSchema<CompletionBody & { prompt: unknown }>(completionsSchema);

export function validateCompletionBody(raw: unknown): CompletionBody {
  const body = validate(raw);
  const prompts = Array.isArray(body.prompt) ? body.prompt : [body.prompt];
  if (prompts.some((p) => typeof p !== 'string')) {
    throw new InvalidRequestError('Token-id prompts are not supported: every model here is a chat model, which takes text. Send the prompt as a string.', { param: 'prompt', code: 'unsupported_value' });
  }
  if (body.suffix != null && body.suffix !== '') {
    throw new InvalidRequestError("'suffix' (text insertion) is not supported: chat models only continue a prompt.", { param: 'suffix', code: 'unsupported_parameter' });
  }
  if (body.best_of != null && body.best_of !== (body.n ?? 1)) {
    throw new InvalidRequestError("'best_of' other than 'n' is not supported: chat models do not rank candidates.", { param: 'best_of', code: 'unsupported_parameter' });
  }
  if (body.stream) {
    throw new InvalidRequestError("'stream' is not supported on /v1/completions; stream with /v1/chat/completions.", { param: 'stream', code: 'unsupported_parameter' });
  }
  if (body.echo && body.logprobs != null) {
    throw new InvalidRequestError("'echo' with 'logprobs' is not supported: chat models give no log probabilities for the prompt.", { param: 'echo', code: 'unsupported_parameter' });
  }
  return body as CompletionBody;
}
