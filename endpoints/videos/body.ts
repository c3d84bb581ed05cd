/**
 * JSON Schema of `POST /v1/videos/generations`. The common shape only: which values one model takes
 * (durations, resolutions, ratios, n, person_generation, a reference image) is the catalog's allowedParams.
 */
import { InvalidRequestError } from '../../core/errors';
import { compileSchema, SAFE_INTEGER } from '../validate';

export const videoGenerationsSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1, maxLength: 10_000 },
    // The spec's `duration`; the guide's example sends `duration_seconds`. Numbers, or their string form.
    duration: { type: ['number', 'string'], exclusiveMinimum: 0, maximum: 3600, maxLength: 16 },
    duration_seconds: { type: ['number', 'string'], exclusiveMinimum: 0, maximum: 3600, maxLength: 16 },
    resolution: { type: 'string', minLength: 1 },
    aspect_ratio: { type: 'string', minLength: 1 },
    n: { type: 'integer', minimum: 1, maximum: 16 },
    image_url: { type: 'string', minLength: 1 },
    image_base64: { type: 'string', minLength: 1 },
    person_generation: { enum: ['dont_allow', 'allow_adult', 'allow_all'] },
    negative_prompt: { type: 'string' },
    seed: { type: 'integer', ...SAFE_INTEGER },
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

/**
 * A video's `WxH` from its resolution and aspect ratio (`720p` at `16:9` is 1280x720; the long side
 * rounded to an even number, as encoders want). A resolution that is already `WxH` is itself.
 */
export function videoSize(params: Record<string, unknown>): string {
  const resolution = String(params.resolution ?? '');
  if (/^\d+x\d+$/.test(resolution)) return resolution;
  const short = /^(\d+)p$/.exec(resolution);
  const ratio = /^(\d+):(\d+)$/.exec(String(params.aspect_ratio ?? '16:9'));
  if (!short || !ratio) return resolution;
  const [w, h] = [Number(ratio[1]), Number(ratio[2])];
  const side = Number(short[1]);
  const long = 2 * Math.round((side * Math.max(w, h)) / Math.min(w, h) / 2);
  return w >= h ? `${long}x${side}` : `${side}x${long}`;
}

/** OpenAI's `POST /v1/videos` (Sora's shape): `seconds` and `size` instead of duration, resolution and ratio. */
export const DEFAULT_OPENAI_VIDEO_MODEL = 'sora-2';

export const openAIVideoSchema = {
  type: 'object',
  required: ['prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: videoGenerationsSchema.properties.prompt,
    seconds: { type: ['string', 'integer'], pattern: '^[0-9]{1,4}$', minimum: 1, maximum: 3600 },
    size: { type: 'string', pattern: '^[0-9]+x[0-9]+$' },
    input_reference: {
      type: 'object',
      properties: { image_url: { type: 'string', minLength: 1 }, file_id: { type: 'string', minLength: 1 } },
      additionalProperties: false,
    },
    user: { type: 'string' },
  },
  additionalProperties: false,
} as const;

export interface OpenAIVideoBody {
  model?: string;
  prompt: string;
  seconds?: string | number;
  size?: string;
  input_reference?: { image_url?: string; file_id?: string };
  user?: string;
}

export const validateOpenAIVideoBody = compileSchema<OpenAIVideoBody>(openAIVideoSchema);

/** The catalog parameter each OpenAI field becomes (for errors that name the field the client sent). */
export const OPENAI_VIDEO_ALIASES: Record<string, string> = {
  duration: 'seconds', resolution: 'size', aspect_ratio: 'size', image_url: 'input_reference', image_base64: 'input_reference',
};

/**
 * The job an OpenAI-shaped request asks for: `seconds` is the duration, and `size` (`WxH`) the resolution
 * (its short side, `720p`) and the aspect ratio (landscape 16:9, portrait 9:16, square 1:1), each sent only
 * to a model that takes it. The reference image comes separately (a URL here, or the bytes of an upload
 * or a file).
 */
export function videoRequestFromOpenAI(body: OpenAIVideoBody, takes: (param: string) => boolean, image: { image_url?: string; image_base64?: string }): VideoGenerationBody {
  const out: VideoGenerationBody = { model: body.model ?? DEFAULT_OPENAI_VIDEO_MODEL, prompt: body.prompt, ...image };
  if (body.seconds !== undefined) out.duration = Number(body.seconds);
  if (body.user !== undefined) out.user = body.user;
  if (body.size !== undefined) {
    const [w, h] = body.size.split('x').map(Number);
    if (takes('resolution')) out.resolution = `${Math.min(w, h)}p`;
    if (takes('aspect_ratio')) out.aspect_ratio = w > h ? '16:9' : w < h ? '9:16' : '1:1';
  }
  return out;
}
