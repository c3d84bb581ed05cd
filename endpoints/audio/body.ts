/**
 * JSON Schemas of `POST /v1/audio/speech` and `POST /v1/audio/transcriptions`. As for images, the schema
 * types the common fields and the model's catalog record decides which optional ones it takes.
 */
import type { UploadRef } from '../../domain/uploads';
import { compileSchema } from '../validate';

export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechResponseFormat = (typeof SPEECH_FORMATS)[number];

export const speechSchema = {
  type: 'object',
  required: ['model', 'input', 'voice'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { type: 'string', minLength: 1, maxLength: 4096 },
    voice: { type: 'string', minLength: 1 },
    response_format: { enum: SPEECH_FORMATS },
    speed: { type: 'number', minimum: 0.25, maximum: 4 },
    instructions: { type: 'string' },
  },
  additionalProperties: true,
} as const;

export interface SpeechBody {
  model: string;
  input: string;
  voice: string;
  response_format?: SpeechResponseFormat;
  speed?: number;
  instructions?: string;
  [param: string]: unknown;
}

export const validateSpeechBody = compileSchema<SpeechBody>(speechSchema);

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptionResponseFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** The fields besides the audio itself (a multipart form's, after coercion, or a JSON body's). */
export const transcriptionFieldsSchema = {
  type: 'object',
  required: ['model'],
  properties: {
    model: { type: 'string', minLength: 1 },
    language: { type: 'string', minLength: 1 },
    prompt: { type: 'string' },
    response_format: { enum: TRANSCRIPTION_FORMATS },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    timestamp_granularities: { type: 'array', items: { enum: ['word', 'segment'] }, minItems: 1, maxItems: 2 },
    stream: { const: false },
  },
  additionalProperties: true,
} as const;

export interface TranscriptionFields {
  model: string;
  language?: string;
  prompt?: string;
  response_format?: TranscriptionResponseFormat;
  temperature?: number;
  timestamp_granularities?: Array<'word' | 'segment'>;
  [param: string]: unknown;
}

export interface TranscriptionBody extends TranscriptionFields {
  file: UploadRef;
}

export const validateTranscriptionFields = compileSchema<TranscriptionFields>(transcriptionFieldsSchema);

/** Fields that name request plumbing rather than model parameters. */
export const TRANSCRIPTION_REQUEST_FIELDS = new Set(['model', 'file', 'filename', 'stream']);

/** `POST /v1/audio/translations`: OpenAI's fields (no `language`: the output is English). */
export const translationFieldsSchema = {
  type: 'object',
  required: ['model'],
  properties: {
    model: transcriptionFieldsSchema.properties.model,
    prompt: transcriptionFieldsSchema.properties.prompt,
    response_format: transcriptionFieldsSchema.properties.response_format,
    temperature: transcriptionFieldsSchema.properties.temperature,
  },
  additionalProperties: false,
} as const;

export const validateTranslationFields = compileSchema<TranscriptionFields>(translationFieldsSchema);
