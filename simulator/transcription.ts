/**
 * Simulated transcription: gives back the text our speech endpoint embedded in the audio; for any other
 * audio, a deterministic sentence sized to its duration. Duration comes from the container.
 */
import type { CallContext, TranscriptionModelAdapter, TranscriptionRequest, TranscriptionResult, TranscriptionSegment, TranslationRequest } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant, rejectRequest } from './behaviour';
import { probeAudio } from './media/audio-probe';
import { prng, seedFrom } from './seed';
import type { SimulatedSettings } from './settings';

const SEGMENT_SECONDS = 5;
const WORDS_PER_SECOND = 2.5;

export function createSimulatedTranscription(upstreamModel: string, settings: SimulatedSettings): TranscriptionModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  const listen = async (req: TranslationRequest, language: string, ctx: CallContext): Promise<TranscriptionResult> => {
    const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
    if (!req.audio || req.audio.length === 0) throw rejectRequest(provider, upstreamModel, 'The audio file is empty.');
    if (outcome === 'malformed') throw malformedAnswer(provider);
    const probe = probeAudio(req.audio, { filename: req.filename, mediaType: req.mediaType });
    const durationSeconds = Math.round(probe.seconds * 1000) / 1000;
    const text = (probe.text ?? inventTranscript(req.audio, durationSeconds)).trim();
    return { text, language, durationSeconds, segments: segment(text, durationSeconds) };
  };
  return {
    doTranscribe: (req: TranscriptionRequest, ctx: CallContext) => listen(req, req.language ?? 'en', ctx),
    // Everything it hears is English already (our speech model speaks the text it was given): the same words.
    doTranslate: (req: TranslationRequest, ctx: CallContext) => listen(req, 'english', ctx),
  };
}

const SENTENCES = [
  'Thanks for calling, this is a simulated transcript.',
  'The weather today is mild with a light breeze.',
  'Please remember to review the quarterly report.',
  'We will meet again next week to discuss the plan.',
  'The quick brown fox jumps over the lazy dog.',
  'Every recording gets the same words on every run.',
  'Let us move on to the next item on the agenda.',
  'That concludes the update for this afternoon.',
];

/** A stable stand-in for speech we did not produce: about 2.5 words per second, from a fixed pool. */
function inventTranscript(audio: Buffer, seconds: number): string {
  const random = prng(seedFrom('transcript', audio.length, audio.subarray(0, 4096).toString('base64')));
  const wanted = Math.max(4, Math.min(600, Math.round(seconds * WORDS_PER_SECOND)));
  const out: string[] = [];
  let words = 0;
  while (words < wanted) {
    const sentence = SENTENCES[Math.floor(random() * SENTENCES.length)];
    out.push(sentence);
    words += sentence.split(' ').length;
  }
  return out.join(' ');
}

/** Splits the text into ~5 s segments, words spread evenly over the duration. */
function segment(text: string, seconds: number): TranscriptionSegment[] {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return [];
  const count = Math.max(1, Math.min(words.length, Math.ceil(seconds / SEGMENT_SECONDS)));
  const segments: TranscriptionSegment[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * words.length) / count);
    const to = Math.floor(((i + 1) * words.length) / count);
    segments.push({
      id: i,
      start: Math.round(((i * seconds) / count) * 1000) / 1000,
      end: Math.round((((i + 1) * seconds) / count) * 1000) / 1000,
      text: words.slice(from, to).join(' '),
    });
  }
  return segments;
}
