/** Simulated text-to-speech: a babbling tone per word, in every speech format, with the text embedded. */
import type { CallContext, SpeechModelAdapter, SpeechRequest, SpeechResult } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant, rejectRequest } from './behaviour';
import { AUDIO_MEDIA_TYPES, encodeAudio } from './media/audio';
import { embedTextInSamples, pcmSeconds, synthesizeSpeech } from './media/synth';
import type { SimulatedSettings } from './settings';

export function createSimulatedSpeech(upstreamModel: string, settings: SimulatedSettings): SpeechModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  return {
    async doSynthesize(req: SpeechRequest, ctx: CallContext): Promise<SpeechResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      if (!req.input?.trim()) throw rejectRequest(provider, upstreamModel, "'input' must not be empty.");
      if (!(req.format in AUDIO_MEDIA_TYPES)) throw rejectRequest(provider, upstreamModel, `Unsupported response_format '${req.format}'.`);
      const speed = req.speed ?? 1;
      if (!(speed >= 0.25 && speed <= 4)) throw rejectRequest(provider, upstreamModel, "'speed' must be between 0.25 and 4.0.");
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const audio = synthesizeSpeech(req.input, req.voice, speed);
      embedTextInSamples(audio.samples, req.input);
      const title = Array.from(req.input.replace(/\s+/g, ' ').trim()).slice(0, 60).join('');
      const data = encodeAudio(req.format, audio, { title, text: req.input, software: `model-gateway simulated speech (${variant.base}, voice ${req.voice})` });
      return { audio: data, mediaType: AUDIO_MEDIA_TYPES[req.format], seconds: round(pcmSeconds(audio)) };
    },
  };
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
