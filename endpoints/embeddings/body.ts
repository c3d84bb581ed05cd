/** JSON Schema of `POST /v1/embeddings`. */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema, MAX_TOKEN_ID } from '../validate';

export const MAX_EMBEDDING_INPUTS = 2048;

const tokenId = { type: 'integer', minimum: 0, maximum: MAX_TOKEN_ID };

export const embeddingsSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    // Texts, or token ids (one input as an array of ids, or several as arrays of them).
    input: {
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
        { type: 'array', minItems: 1, items: tokenId },
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'array', minItems: 1, items: tokenId } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1, maximum: 65_536 },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export interface EmbeddingsBody {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
}

const validate = compileSchema<EmbeddingsBody>(embeddingsSchema);

export function validateEmbeddingsBody(body: unknown): EmbeddingsBody {
  // ajv reports a too-long array as a generic anyOf failure; say what the limit is.
  const input = (body as { input?: unknown })?.input;
  if (Array.isArray(input) && input.length > MAX_EMBEDDING_INPUTS) {
    throw new InvalidRequestError(
      `'input' holds ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} strings are allowed per request.`, { param: 'input', code: 'too_many_inputs' });
  }
  if (Array.isArray(input) && input.length > 0 && !isUniform(input)) {
    throw new InvalidRequestError("'input' must be a string, a list of strings, a list of token ids, or a list of such lists, not a mix.", { param: 'input', code: 'invalid_type' });
  }
  // ajv reports a bad token id as the first anyOf branch's failure (not a string); name the id instead.
  if (Array.isArray(input)) checkTokenIds(input);
  return validate(body);
}

function checkTokenIds(input: unknown[]): void {
  const lists = Array.isArray(input[0]) ? (input as unknown[][]).map((ids, i) => [`input[${i}]`, ids] as const) : [['input', input] as const];
  for (const [path, ids] of lists) {
    if (!Array.isArray(ids)) continue;
    const bad = ids.findIndex((id) => typeof id === 'number' && !(Number.isInteger(id) && id >= 0 && id <= MAX_TOKEN_ID));
    if (bad >= 0) {
      throw new InvalidRequestError(`Invalid value for '${path}[${bad}]': a token id is an integer from 0 to ${MAX_TOKEN_ID}.`, { param: `${path}[${bad}]`, code: 'invalid_value' });
    }
  }
}

function isUniform(input: unknown[]): boolean {
  const kind = (item: unknown) => (Array.isArray(item) ? 'array' : typeof item);
  return input.every((item) => kind(item) === kind(input[0]));
}

/** The inputs: texts, or token ids per input. */
export function embeddingInputs(body: EmbeddingsBody): { texts: string[] } | { tokens: number[][] } {
  const { input } = body;
  if (typeof input === 'string') return { texts: [input] };
  if (typeof input[0] === 'number') return { tokens: [input as number[]] };
  if (Array.isArray(input[0])) return { tokens: input as number[][] };
  return { texts: input as string[] };
}
