/** JSON Schema of `POST /v1/moderations`. */
import { compileSchema } from '../validate';
import type { ModerationPart } from '../../providers/types';

/** What OpenAI uses when the request names no model. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';
export const MAX_MODERATION_INPUTS = 32;

const part = {
  anyOf: [
    { type: 'object', required: ['type', 'text'], properties: { type: { const: 'text' }, text: { type: 'string' } }, additionalProperties: false },
    {
      type: 'object', required: ['type', 'image_url'],
      properties: {
        type: { const: 'image_url' },
        image_url: { type: 'object', required: ['url'], properties: { url: { type: 'string', minLength: 1 } }, additionalProperties: false },
      },
      additionalProperties: false,
    },
  ],
};

export const moderationsSchema = {
  type: 'object',
  required: ['input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: {
      anyOf: [
        { type: 'string' },
        { type: 'array', minItems: 1, maxItems: MAX_MODERATION_INPUTS, items: { type: 'string' } },
        { type: 'array', minItems: 1, items: part },
      ],
    },
  },
  additionalProperties: false,
} as const;

export interface ModerationBody {
  model: string;
  input: string | string[] | ModerationPart[];
}

const validate = compileSchema<Omit<ModerationBody, 'model'> & { model?: string }>(moderationsSchema);

export function validateModerationBody(raw: unknown): ModerationBody {
  const body = validate(raw);
  return { ...body, model: body.model ?? DEFAULT_MODERATION_MODEL };
}

/** Each input classified on its own: a text, or a list of parts classified together. */
export function moderationInputs(body: ModerationBody): Array<string | ModerationPart[]> {
  if (typeof body.input === 'string') return [body.input];
  if (body.input.every((i) => typeof i === 'string')) return body.input as string[];
  return [body.input as ModerationPart[]];
}
