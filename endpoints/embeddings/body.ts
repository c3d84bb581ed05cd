/** JSON Schema of `POST /v1/embeddings`. */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema } from '../validate';

export const MAX_EMBEDDING_INPUTS = 2048;

export const embeddingsSchema = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, maxItems: MAX_EMBEDDING_INPUTS, items: { type: 'string', minLength: 1 } },
      ],
    },
    encoding_format: { enum: ['float', 'base64'] },
    dimensions: { type: 'integer', minimum: 1 },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export interface EmbeddingsBody {
  model: string;
  input: string | string[];
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
  return validate(body);
}
