/**
 * `POST /v1/music/generations` as an endpoint handler, synchronous like images: the catalog's music
 * providers answer with the audio itself, so the request waits for it. Each track is stored under the
 * request's prefix and answered as a signed URL; the charge is per track plus per second of each track.
 */
import { validateModelParams } from '../../catalog/params';
import { musicCost } from '../../catalog/pricing';
import { MUSIC_REQUEST_FIELDS, type MusicGenerationBody } from './body';
import { microToCredits } from '../../core/money';
import { callContext, signedResultUrl, storeResult } from '../media';
import { modelAdapter } from '../model-adapter';
import type { EndpointHandler } from '../types';

/** Length assumed when neither the request nor the record's defaults give one. */
const DEFAULT_DURATION_SECONDS = 30;

export function musicModelParams(body: MusicGenerationBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!MUSIC_REQUEST_FIELDS.has(name) && value !== undefined && value !== null) params[name] = value;
  }
  return params;
}

function durationOf(params: Record<string, unknown>): number {
  return typeof params.duration === 'number' ? params.duration : DEFAULT_DURATION_SECONDS;
}

export const musicHandler: EndpointHandler<MusicGenerationBody> = {
  endpoint: 'music.generations',
  modality: 'music',

  check(record, body) {
    validateModelParams(record, musicModelParams(body));
  },

  estimate(record, body) {
    return musicCost(record, { seconds: durationOf(validateModelParams(record, musicModelParams(body))) });
  },

  async call(record, body, env) {
    const params = validateModelParams(record, musicModelParams(body));
    const { duration: _duration, response_format: format, ...rest } = params;
    const result = await modelAdapter(env, record, 'music').doGenerate({
      prompt: body.prompt,
      durationSeconds: durationOf(params),
      format: format === 'wav' ? 'wav' : 'mp3',
      params: rest,
    }, callContext(env));
    const data: Array<Record<string, unknown>> = [];
    let chargeMicro = 0;
    let audioMs = 0;
    for (const [index, track] of result.tracks.entries()) {
      const key = await storeResult(env.storage, env.requestId, `track-${index}`, track.data, track.mediaType);
      data.push({ url: await signedResultUrl(env.storage, key, track.mediaType), duration_seconds: track.durationSeconds, content_type: track.mediaType });
      chargeMicro += musicCost(record, { seconds: track.durationSeconds });
      audioMs += Math.round(track.durationSeconds * 1000);
    }
    return {
      response: { kind: 'json', body: { created: env.created, model: record.slug, data, credits_used: microToCredits(chargeMicro) } },
      chargeMicro,
      usage: { inputTokens: 0, outputTokens: 0, units: { tracks: result.tracks.length, audio_ms: audioMs } },
    };
  },
};
