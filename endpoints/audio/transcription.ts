/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations` (to English, on models with the
 * `translation` capability) as endpoint handlers. The upload is read back from object storage;
 * the reservation assumed the API's estimate of its length, the charge is the length the provider
 * measured (the estimate only when it reports none). Response formats are made in
 * domain/media/transcripts.ts; text, SRT and WebVTT are plain-text bodies.
 */
import { validateModelParams } from '../../catalog/params';
import { transcriptionCost } from '../../catalog/pricing';
import { TRANSCRIPTION_REQUEST_FIELDS, type TranscriptionBody } from './body';
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import type { ModelRecord } from '../../catalog/types';
import { formatTranscript, type TranscriptFormat } from './transcripts';
import { callContext, textResponse } from '../media';
import { modelAdapter } from '../model-adapter';
import type { EndpointHandler } from '../types';

export function transcriptionModelParams(body: TranscriptionBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!TRANSCRIPTION_REQUEST_FIELDS.has(name) && value !== undefined && value !== null) params[name] = value;
  }
  return params;
}

function estimatedSeconds(body: TranscriptionBody): number {
  return body.file.estimatedSeconds ?? 1;
}

type Task = 'transcribe' | 'translate';

function checkRequest(record: ModelRecord, body: TranscriptionBody, task: Task): Record<string, unknown> {
  if (task === 'translate' && !record.capabilities.translation) {
    throw new InvalidRequestError(`Model '${record.slug}' does not translate audio; use a model with the translation capability (whisper-1, sim-transcribe).`, { param: 'model', code: 'model_not_supported' });
  }
  return validateModelParams(record, transcriptionModelParams(body));
}

function audioHandler(endpoint: 'audio.transcriptions' | 'audio.translations', task: Task): EndpointHandler<TranscriptionBody> {
  return {
    endpoint,
    modality: 'transcription',

    check(record, body) {
      checkRequest(record, body, task);
    },

    estimate(record, body) {
      return transcriptionCost(record, { seconds: estimatedSeconds(body) });
    },

    async call(record, body, env) {
      const params = checkRequest(record, body, task);
      const audio = await env.storage.getBuffer(body.file.key);
      const adapter = modelAdapter(env, record, 'transcription');
      const request = {
        audio,
        filename: body.file.filename,
        mediaType: body.file.mediaType,
        ...(typeof params.prompt === 'string' ? { prompt: params.prompt } : {}),
        ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
      };
      if (task === 'translate' && !adapter.doTranslate) {
        throw new InvalidRequestError(`Model '${record.slug}' cannot translate audio on this gateway.`, { param: 'model', code: 'model_not_supported' });
      }
      const result = task === 'translate'
        ? await adapter.doTranslate!(request, callContext(env))
        : await adapter.doTranscribe({ ...request, ...(typeof params.language === 'string' ? { language: params.language } : {}) }, callContext(env));
      const seconds = result.durationSeconds > 0 ? result.durationSeconds : estimatedSeconds(body);
      const chargeMicro = transcriptionCost(record, { seconds });
      const formatted = formatTranscript(result, {
        format: (params.response_format ?? 'json') as TranscriptFormat,
        granularities: params.timestamp_granularities as Array<'word' | 'segment'> | undefined,
        seconds,
        language: task === 'translate' ? 'english' : typeof params.language === 'string' ? params.language : undefined,
        ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
        task,
      });
      const response = formatted.kind === 'json'
        ? { kind: 'json' as const, body: { ...formatted.body, credits_used: microToCredits(chargeMicro) } }
        : await textResponse(env.storage, env.requestId, formatted.text, formatted.contentType);
      return { response, chargeMicro, usage: { inputTokens: 0, outputTokens: 0, units: { audio_ms: Math.round(seconds * 1000) } } };
    },
  };
}

export const transcriptionHandler = audioHandler('audio.transcriptions', 'transcribe');
export const translationHandler = audioHandler('audio.translations', 'translate');
