/**
 * ElevenLabs text to speech: `POST /v1/text-to-speech/{voice_id}?output_format=...` answers with the
 * audio bytes. Our formats map onto ElevenLabs' `codec_samplerate[_bitrate]` names; the ones ElevenLabs
 * cannot produce (flac, aac) are refused before anything is sent.
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamBytes } from '../http';
import type { CallContext, SpeechFormat, SpeechModelAdapter, SpeechRequest, SpeechResult } from '../types';
import { isWav, pcmSeconds, wavFromPcm, wavSeconds } from './audio';
import { resolveVoiceId } from './voices';

/** Sample rate of the PCM and WAV we ask for: the highest ElevenLabs offers without a Pro plan. */
const PCM_SAMPLE_RATE = 24_000;

interface OutputPlan {
  outputFormat: string;
  mediaType: string;
  /** For compressed formats, the nominal bitrate used to estimate the length. */
  bitsPerSecond?: number;
}

const OUTPUT_PLANS: Partial<Record<SpeechFormat, OutputPlan>> = {
  mp3: { outputFormat: 'mp3_44100_128', mediaType: 'audio/mpeg', bitsPerSecond: 128_000 },
  opus: { outputFormat: 'opus_48000_64', mediaType: 'audio/ogg', bitsPerSecond: 64_000 },
  pcm: { outputFormat: `pcm_${PCM_SAMPLE_RATE}`, mediaType: 'audio/pcm' },
  wav: { outputFormat: `wav_${PCM_SAMPLE_RATE}`, mediaType: 'audio/wav' },
};

/** ElevenLabs' `voice_settings.speed` range; ours (0.25 to 4) is wider, so the ends are clamped. */
const MIN_SPEED = 0.7;
const MAX_SPEED = 1.2;

export class ElevenLabsSpeechModel implements SpeechModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doSynthesize(req: SpeechRequest, ctx: CallContext): Promise<SpeechResult> {
    const provider = this.connection.providerId;
    const request = this.connection.request(ctx, { method: 'POST' });
    const plan = OUTPUT_PLANS[req.format];
    if (!plan) {
      throw new UpstreamError(`${provider} cannot produce ${req.format} audio; use mp3, opus, wav or pcm`, {
        kind: 'caller_error', provider, code: 'unsupported_response_format', param: 'response_format',
      });
    }
    const voiceId = encodeURIComponent(resolveVoiceId(req.voice));
    const url = this.connection.url(`/v1/text-to-speech/${voiceId}?output_format=${plan.outputFormat}`);
    const { data, headers } = await upstreamBytes(provider, url, {
      ...request,
      // `instructions` has no ElevenLabs counterpart (its expressive models read inline audio tags).
      json: { text: req.input, model_id: this.model, voice_settings: { speed: clampSpeed(req.speed) } },
    });
    const contentType = headers.get('content-type') ?? '';
    expectShape(provider, data.length > 0 && !contentType.includes('json'), 'the answer holds no audio');
    return toResult(req.format, plan, data);
  }
}

function clampSpeed(speed: number): number {
  return Math.min(MAX_SPEED, Math.max(MIN_SPEED, speed));
}

function toResult(format: SpeechFormat, plan: OutputPlan, data: Buffer): SpeechResult {
  if (format === 'pcm') return { audio: data, mediaType: plan.mediaType, seconds: round(pcmSeconds(data, PCM_SAMPLE_RATE)) };
  if (format === 'wav') {
    // Should a host answer the wav request with bare PCM, give the caller a playable file anyway.
    const audio = isWav(data) ? data : wavFromPcm(data, PCM_SAMPLE_RATE);
    const seconds = wavSeconds(audio);
    return { audio, mediaType: plan.mediaType, ...(seconds === null ? {} : { seconds: round(seconds) }) };
  }
  // Compressed audio: an estimate from the nominal bitrate is close enough for per-second metering.
  const seconds = plan.bitsPerSecond ? round((data.length * 8) / plan.bitsPerSecond) : undefined;
  return { audio: data, mediaType: plan.mediaType, ...(seconds === undefined ? {} : { seconds }) };
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
