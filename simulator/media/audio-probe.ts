/**
 * Reads back an audio upload: which container it is and how long it plays (core/media-probe), and the
 * text we embedded when the clip came from the simulated speech endpoint (WAV LIST/INFO, ID3 USLT, Vorbis
 * comments, AAC data stream elements, or the hidden bits of raw PCM).
 */
import { AudioFormat, AudioHints, probeAudio as probeContainer } from '../../core/media-probe';
import { parseAdts } from './aac';
import { parseFlac } from './flac';
import { parseId3 } from './id3';
import { parseOggOpus } from './opus';
import { extractTextFromSamples, samplesFromBytes } from './synth';
import { parseWav } from './wav';

export type ProbedFormat = AudioFormat;

export interface AudioProbe {
  format: ProbedFormat;
  seconds: number;
  /** The spoken text, when the audio carries ours. */
  text: string | null;
}

export function probeAudio(data: Buffer, hints: AudioHints = {}): AudioProbe {
  const probe = probeContainer(data, hints);
  if (probe.format === 'unknown') {
    // Raw PCM of ours is recognised by its hidden text even without a hint.
    const hidden = hiddenText(data);
    return hidden === null ? { ...probe, text: null } : { ...probeContainer(data, { mediaType: 'audio/pcm' }), text: hidden };
  }
  return { ...probe, text: spokenText(data, probe.format) };
}

function spokenText(data: Buffer, format: ProbedFormat): string | null {
  switch (format) {
    case 'wav': {
      const wav = parseWav(data)!;
      if (wav.info.ICMT !== undefined) return wav.info.ICMT;
      const pcm16Mono = wav.formatTag === 1 && wav.bitsPerSample === 16 && wav.channels === 1;
      return pcm16Mono ? hiddenText(data.subarray(wav.dataOffset, wav.dataOffset + wav.dataLength)) : null;
    }
    case 'flac': return parseFlac(data)?.comments.LYRICS ?? null;
    case 'opus': return parseOggOpus(data)?.comments.LYRICS ?? null;
    case 'aac': return parseAdts(data)?.text ?? null;
    case 'mp3': return parseId3(data)?.frames.USLT ?? null;
    case 'pcm': return hiddenText(data);
    default: return null;
  }
}

function hiddenText(samples: Buffer): string | null {
  return extractTextFromSamples(samplesFromBytes(samples));
}
