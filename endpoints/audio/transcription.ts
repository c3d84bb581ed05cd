/**
 * `POST /v1/audio/transcriptions` as an endpoint handler. The upload is read back from object storage;
 * the reservation assumed the API's estimate of its length, the charge is the length the provider
 * measured (the estimate only when it reports none). Response formats are made in
 * domain/media/transcripts.ts; text, SRT and WebVTT are plain-text bodies.
 */
import { validateModelParams } from '../../catalog/params';
import { transcriptionCost } from '../../catalog/pricing';
import { TRANSCRIPTION_REQUEST_FIELDS, type TranscriptionBody } from './body';
import { microToCredits } from '../../core/money';
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

export const transcriptionHandler: EndpointHandler<TranscriptionBody> = {
  endpoint: 'audio.transcriptions',
  modality: 'transcription',

  check(record, body) {
    validateModelParams(record, transcriptionModelParams(body));
  },

  estimate(record, body) {
    return transcriptionCost(record, { seconds: estimatedSeconds(body) });
  },

  async call(record, body, env) {
    const params = validateModelParams(record, transcriptionModelParams(body));
    const audio = await env.storage.getBuffer(body.file.key);
    const result = await modelAdapter(env.providers, record, 'transcription').doTranscribe({
      audio,
      filename: body.file.filename,
      mediaType: body.file.mediaType,
      ...(typeof params.language === 'string' ? { language: params.language } : {}),
      ...(typeof params.prompt === 'string' ? { prompt: params.prompt } : {}),
      ...(typeof params.temperature === 'number' ? { temperature: params.temperature } : {}),
    }, callContext(env));
    const seconds = result.durationSeconds > 0 ? result.durationSeconds : estimatedSeconds(body);
    const chargeMicro = transcriptionCost(record, { seconds });
    const formatted = formatTranscript(result, {
      format: (params.response_format ?? 'json') as TranscriptFormat,
      granularities: params.timestamp_granularities as Array<'word' | 'segment'> | undefined,
      seconds,
      language: typeof params.language === 'string' ? params.language : undefined,
    });
    const response = formatted.kind === 'json'
      ? { kind: 'json' as const, body: { ...formatted.body, credits_used: microToCredits(chargeMicro) } }
      : await textResponse(env.storage, env.requestId, formatted.text, formatted.contentType);
    return { response, chargeMicro, usage: { inputTokens: 0, outputTokens: 0, units: { audio_ms: Math.round(seconds * 1000) } } };
  },
};
