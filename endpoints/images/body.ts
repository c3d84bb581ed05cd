/**
 * JSON Schemas of `POST /v1/images/generations` and `POST /v1/images/edits`. They type the fields the
 * spec names; which of them (and of the families' own, e.g. FLUX `steps`) one model takes is decided by
 * its catalog record (`validateModelParams`), so unknown names pass the schema and are refused there,
 * with a 400 naming the parameter and listing what the model allows.
 */
import { InvalidRequestError } from '../../core/errors';
import type { UploadRef } from '../../domain/uploads';
import { compileSchema, SAFE_INTEGER } from '../validate';

const imageParams = {
  model: { type: 'string', minLength: 1 },
  prompt: { type: 'string', minLength: 1, maxLength: 32_000 },
  n: { type: 'integer', minimum: 1, maximum: 128 },
  size: { type: 'string', minLength: 1 },
  quality: { type: 'string', minLength: 1 },
  style: { enum: ['vivid', 'natural'] },
  response_format: { enum: ['url', 'b64_json'] },
  aspect_ratio: { type: 'string', minLength: 1 },
  image_size: { type: 'string', minLength: 1 },
  person_generation: { enum: ['dont_allow', 'allow_adult', 'allow_all'] },
  background: { enum: ['transparent', 'opaque', 'auto'] },
  output_format: { enum: ['png', 'webp', 'jpeg'] },
  output_compression: { type: 'integer', minimum: 0, maximum: 100 },
  input_fidelity: { enum: ['high', 'low'] },
  moderation: { enum: ['auto', 'low'] },
  negative_prompt: { type: 'string' },
  seed: { type: 'integer', ...SAFE_INTEGER },
  partial_images: { type: 'integer', minimum: 0, maximum: 3 },
  stream: { type: 'boolean' },
  user: { type: 'string' },
} as const;

export const imageGenerationSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: imageParams,
  additionalProperties: true,
} as const;

/** The edit form's fields after coercion; the files arrive as uploads (see api/routes/images.ts). */
export const imageEditFieldsSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: imageParams,
  additionalProperties: true,
} as const;

/** What `POST /v1/images/variations` takes besides the image (OpenAI's fields; `model` defaults to dall-e-2). */
export const DEFAULT_VARIATION_MODEL = 'dall-e-2';
export const imageVariationFieldsSchema = {
  type: 'object',
  properties: { model: imageParams.model, n: imageParams.n, size: imageParams.size, response_format: imageParams.response_format, user: imageParams.user },
  additionalProperties: false,
} as const;

export interface ImageGenerationBody {
  model: string;
  /** Absent on variations. */
  prompt: string;
  n?: number;
  size?: string;
  response_format?: 'url' | 'b64_json';
  stream?: boolean;
  user?: string;
  [param: string]: unknown;
}

/** What the request workflow carries for an edit: the form's fields and the storage keys of its files. */
export interface ImageEditBody extends ImageGenerationBody {
  image: UploadRef[];
  mask?: UploadRef;
}

export const validateImageGenerationBody = compileSchema<ImageGenerationBody>(imageGenerationSchema);
const validateVariationFields = compileSchema<Omit<ImageGenerationBody, 'model' | 'prompt'> & { model?: string }>(imageVariationFieldsSchema);
const validateEditFields = compileSchema<ImageGenerationBody>(imageEditFieldsSchema);

/** Fields that name request plumbing rather than model parameters. */
export const IMAGE_REQUEST_FIELDS = new Set(['model', 'prompt', 'stream', 'user', 'image', 'mask']);

export function validateImageEditFields(fields: Record<string, unknown>): ImageGenerationBody {
  for (const name of ['image', 'mask']) {
    if (name in fields) throw new InvalidRequestError(`'${name}' must be sent as a file, not as a text field.`, { param: name, code: 'invalid_type' });
  }
  return validateEditFields(fields);
}

export function validateImageVariationFields(fields: Record<string, unknown>): Omit<ImageGenerationBody, 'prompt'> {
  if ('image' in fields) throw new InvalidRequestError("'image' must be sent as a file, not as a text field.", { param: 'image', code: 'invalid_type' });
  const typed = validateVariationFields(fields);
  return { ...typed, model: typed.model ?? DEFAULT_VARIATION_MODEL };
}
