/**
 * Reads back an audio upload: which container it is, how long it plays, and the text we embedded when
 * the clip came from the simulated speech endpoint (WAV LIST/INFO, ID3 USLT, Vorbis comments, AAC data
 * stream elements, or the hidden bits of raw PCM).
 */
import { parseAdts } from './aac';
import { parseFlac } from './flac';
import { parseMp3 } from './mp3';
import { parseOggOpus } from './opus';
import { extractTextFromSamples, samplesFromBytes, SPEECH_SAMPLE_RATE } from './synth';
import { parseWav } from './wav';

export type ProbedFormat = 'wav' | 'mp3' | 'flac' | 'opus' | 'aac' | 'pcm' | 'unknown';

export interface AudioProbe {
  format: ProbedFormat;
  seconds: number;
  /** The spoken text, when the audio carries ours. */
  text: string | null;
}

/** Bytes per second assumed for containers we cannot read (128 kbit/s). */
const FALLBACK_BYTES_PER_SECOND = 16_000;

export function probeAudio(data: Buffer, hints: { filename?: string; mediaType?: string } = {}): AudioProbe {
  const wav = parseWav(data);
  if (wav) {
    let text: string | null = wav.info.ICMT ?? null;
    if (text === null && wav.formatTag === 1 && wav.bitsPerSample === 16 && wav.channels === 1) {
      text = extractTextFromSamples(samplesFromBytes(data.subarray(wav.dataOffset, wav.dataOffset + wav.dataLength)));
    }
    return { format: 'wav', seconds: wav.seconds, text };
  }
  const flac = parseFlac(data);
  if (flac) return { format: 'flac', seconds: flac.seconds, text: flac.comments.LYRICS ?? null };
  const opus = parseOggOpus(data);
  if (opus) return { format: 'opus', seconds: opus.seconds, text: opus.comments.LYRICS ?? null };
  const adts = parseAdts(data);
  if (adts) return { format: 'aac', seconds: adts.seconds, text: adts.text };
  const mp3 = parseMp3(data);
  if (mp3) return { format: 'mp3', seconds: mp3.seconds, text: mp3.tags.USLT ?? null };
  const looksLikePcm = hints.mediaType === 'audio/pcm' || /\.(pcm|raw)$/i.test(hints.filename ?? '');
  const hidden = extractTextFromSamples(samplesFromBytes(data));
  if (looksLikePcm || hidden !== null) return { format: 'pcm', seconds: data.length / (SPEECH_SAMPLE_RATE * 2), text: hidden };
  return { format: 'unknown', seconds: data.length / FALLBACK_BYTES_PER_SECOND, text: null };
}
