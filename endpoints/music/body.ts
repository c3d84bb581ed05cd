/** JSON Schema of `POST /v1/music/generations`; the model's record decides its optional parameters. */
import { compileSchema, SAFE_INTEGER } from '../validate';

export const musicGenerationSchema = {
  type: 'object',
  required: ['model', 'prompt'],
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1, maxLength: 4096 },
    duration: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
    response_format: { enum: ['mp3', 'wav'] },
    seed: { type: 'integer', minimum: 0, maximum: SAFE_INTEGER.maximum },
    user: { type: 'string' },
  },
  additionalProperties: true,
} as const;

export interface MusicGenerationBody {
  model: string;
  prompt: string;
  duration?: number;
  response_format?: 'mp3' | 'wav';
  user?: string;
  [param: string]: unknown;
}

export const validateMusicGenerationBody = compileSchema<MusicGenerationBody>(musicGenerationSchema);

export const MUSIC_REQUEST_FIELDS = new Set(['model', 'prompt', 'user']);
