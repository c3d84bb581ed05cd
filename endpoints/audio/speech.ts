/**
 * `POST /v1/audio/speech` as an endpoint handler. The audio is stored under the request's prefix and the
 * API streams it back with the format's Content-Type; the charge is per input character, or per second
 * of the produced audio for models priced that way (measured from the audio when the provider does not
 * say).
 */
import { validateModelParams } from '../../catalog/params';
import { estimateSpeechReservation, speechCost, SPEECH_CHARS_PER_SECOND_ESTIMATE } from '../../catalog/pricing';
import type { SpeechBody, SpeechResponseFormat } from './body';
import { probeAudio } from '../../core/media-probe';
import { callContext, storeResult } from '../media';
import { modelAdapter } from '../model-adapter';
import type { EndpointHandler } from '../types';

export const SPEECH_CONTENT_TYPES: Record<SpeechResponseFormat, string> = {
  mp3: 'audio/mpeg', opus: 'audio/ogg', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm',
};

const REQUEST_FIELDS = new Set(['model', 'input']);

export function speechModelParams(body: SpeechBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!REQUEST_FIELDS.has(name) && value !== undefined && value !== null) params[name] = value;
  }
  return params;
}

/** Characters as the providers count them: code points, so an emoji is one. */
export function speechCharacters(input: string): number {
  return Array.from(input).length;
}

/**
 * Playing time of produced audio, for per-second prices: parsed from the container (raw `pcm` is
 * OpenAI's 24 kHz 16-bit mono); if it cannot be read, the speaking-pace estimate the reservation used.
 */
export function producedSeconds(audio: Buffer, format: SpeechResponseFormat, characters: number, speed: number): number {
  if (format === 'pcm') return audio.length / 48_000;
  const probe = probeAudio(audio);
  if (probe.format !== 'unknown' && probe.format !== 'pcm' && probe.seconds > 0) return probe.seconds;
  return Math.max(1, Math.ceil(characters / SPEECH_CHARS_PER_SECOND_ESTIMATE / speed));
}

export const speechHandler: EndpointHandler<SpeechBody> = {
  endpoint: 'audio.speech',
  modality: 'speech',

  check(record, body) {
    validateModelParams(record, speechModelParams(body));
  },

  estimate(record, body) {
    const params = validateModelParams(record, speechModelParams(body));
    return estimateSpeechReservation(record, { characters: speechCharacters(body.input), speed: typeof params.speed === 'number' ? params.speed : 1 });
  },

  async call(record, body, env) {
    const params = validateModelParams(record, speechModelParams(body));
    const format = (params.response_format ?? 'mp3') as SpeechResponseFormat;
    const speed = typeof params.speed === 'number' ? params.speed : 1;
    const result = await modelAdapter(env, record, 'speech').doSynthesize({
      input: body.input,
      voice: body.voice,
      format,
      speed,
      ...(typeof params.instructions === 'string' ? { instructions: params.instructions } : {}),
    }, callContext(env));
    const characters = speechCharacters(body.input);
    const seconds = result.seconds ?? producedSeconds(result.audio, format, characters, speed);
    const chargeMicro = speechCost(record, { characters, seconds });
    const contentType = SPEECH_CONTENT_TYPES[format];
    const storageKey = await storeResult(env.storage, env.requestId, 'speech', result.audio, contentType);
    return {
      response: { kind: 'binary', storageKey, contentType, bytes: result.audio.length },
      chargeMicro,
      usage: { inputTokens: 0, outputTokens: 0, units: { characters, audio_ms: Math.round(seconds * 1000) } },
    };
  },
};
