/** Simulated music: a seeded melody over a bass line, of the requested length, as MP3 or WAV. */
import type { CallContext, MusicModelAdapter, MusicRequest, MusicResult } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant, rejectRequest } from './behaviour';
import { AUDIO_MEDIA_TYPES, encodeAudio } from './media/audio';
import { pcmSeconds, synthesizeMelody } from './media/synth';
import type { SimulatedSettings } from './settings';

const MAX_SECONDS = 600;

export function createSimulatedMusic(upstreamModel: string, settings: SimulatedSettings): MusicModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  return {
    async doGenerate(req: MusicRequest, ctx: CallContext): Promise<MusicResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      if (!(req.durationSeconds > 0 && req.durationSeconds <= MAX_SECONDS)) {
        throw rejectRequest(provider, upstreamModel, `'duration' must be more than 0 and at most ${MAX_SECONDS} seconds.`);
      }
      if (req.format !== 'mp3' && req.format !== 'wav') throw rejectRequest(provider, upstreamModel, `Unsupported response_format '${String(req.format)}'.`);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const audio = synthesizeMelody(req.prompt ?? '', req.durationSeconds, req.params.seed);
      const title = Array.from((req.prompt ?? '').replace(/\s+/g, ' ').trim()).slice(0, 60).join('') || 'Simulated track';
      const data = encodeAudio(req.format, audio, { title, text: req.prompt, software: `model-gateway simulated music (${variant.base})` });
      return { tracks: [{ data, mediaType: AUDIO_MEDIA_TYPES[req.format], durationSeconds: Math.round(pcmSeconds(audio) * 1000) / 1000 }] };
    },
  };
}
