/**
 * JSON Schema of `POST /v1/videos/generations`. The common shape only: which values one model takes
 * (durations, resolutions, ratios, n, person_generation, a reference image) is the catalog's allowedParams.
 */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema } from '../validate';

export const videoGenerationsSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1, maxLength: 10_000 },
    // The spec's `duration`; the guide's example sends `duration_seconds`. Numbers, or their string form.
    duration: { type: ['number', 'string'] },
    duration_seconds: { type: ['number', 'string'] },
    resolution: { type: 'string', minLength: 1 },
    aspect_ratio: { type: 'string', minLength: 1 },
    n: { type: 'integer', minimum: 1 },
    image_url: { type: 'string', minLength: 1 },
    image_base64: { type: 'string', minLength: 1 },
    person_generation: { enum: ['dont_allow', 'allow_adult', 'allow_all'] },
    negative_prompt: { type: 'string' },
    seed: { type: 'integer' },
    loop: { type: 'boolean' },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export interface VideoGenerationBody {
  model: string;
  prompt: string;
  duration?: number | string;
  duration_seconds?: number | string;
  resolution?: string;
  aspect_ratio?: string;
  n?: number;
  image_url?: string;
  image_base64?: string;
  person_generation?: 'dont_allow' | 'allow_adult' | 'allow_all';
  negative_prompt?: string;
  seed?: number;
  loop?: boolean;
  user?: string;
}

const validate = compileSchema<VideoGenerationBody>(videoGenerationsSchema);

/** Fields every video model takes; the rest are model parameters checked against the catalog. */
const UNIVERSAL = new Set(['model', 'prompt', 'user', 'duration_seconds']);

export function validateVideoGenerationBody(raw: unknown): VideoGenerationBody {
  const body = validate(raw);
  if (body.duration !== undefined && body.duration_seconds !== undefined && Number(body.duration) !== Number(body.duration_seconds)) {
    throw new InvalidRequestError("'duration' and 'duration_seconds' name the same thing; give one (or equal values).", { param: 'duration_seconds', code: 'invalid_value' });
  }
  return body;
}

/** The model-specific parameters the request carries (`duration_seconds` counted as `duration`). */
export function videoModelParams(body: VideoGenerationBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!UNIVERSAL.has(key) && value !== undefined) params[key] = value;
  if (params.duration === undefined && body.duration_seconds !== undefined) params.duration = body.duration_seconds;
  return params;
}
