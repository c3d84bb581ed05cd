/**
 * Deterministic audio synthesis: a babbling "voice" (one short note per word, pitch from the word) for
 * speech, and a simple melody over a bass line for music. Output is mono signed 16-bit PCM.
 */
import { prng, seedFrom } from '../seed';

export const SPEECH_SAMPLE_RATE = 24_000;
export const MUSIC_SAMPLE_RATE = 44_100;

const MS_PER_CHARACTER = 60;
const MIN_SPEECH_SECONDS = 0.5;

/** What the container formats record about a synthesized clip (and what transcription reads back). */
export interface AudioTags {
  title?: string;
  /** The spoken text (speech) or the prompt (music). */
  text?: string;
  software?: string;
}

export interface PcmAudio {
  samples: Int16Array;
  sampleRate: number;
}

export function pcmSeconds(audio: PcmAudio): number {
  return audio.samples.length / audio.sampleRate;
}

/** ~60 ms per character, at least half a second, divided by `speed` (0.25..4). */
export function speechSeconds(text: string, speed: number): number {
  const clampedSpeed = Math.min(4, Math.max(0.25, Number.isFinite(speed) && speed > 0 ? speed : 1));
  return Math.max(MIN_SPEECH_SECONDS, (Array.from(text).length * MS_PER_CHARACTER) / 1000 / clampedSpeed);
}

export function synthesizeSpeech(text: string, voice: string, speed: number): PcmAudio {
  const sampleRate = SPEECH_SAMPLE_RATE;
  const total = Math.round(speechSeconds(text, speed) * sampleRate);
  const samples = new Float32Array(total);
  const words = text.split(/\s+/).filter(Boolean);
  const units = words.length > 0 ? words : [''];
  const weights = units.map((word) => Array.from(word).length + 1);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const baseHz = 150 + (seedFrom('voice', voice) % 120);
  let start = 0;
  units.forEach((word, index) => {
    const length = Math.round((weights[index] / weightSum) * total);
    const semitone = (seedFrom('word', word.toLowerCase()) % 13) - 5;
    const hz = baseHz * 2 ** (semitone / 12);
    renderNote(samples, sampleRate, start, Math.round(length * 0.85), hz, 0.32, [1, 0.35, 0.12]);
    start += length;
  });
  return { samples: toInt16(samples), sampleRate };
}

const PENTATONIC = [0, 2, 4, 7, 9, 12, 14, 16];

export function synthesizeMelody(prompt: string, seconds: number, seed?: unknown): PcmAudio {
  const sampleRate = MUSIC_SAMPLE_RATE;
  const total = Math.max(1, Math.round(seconds * sampleRate));
  const samples = new Float32Array(total);
  const random = prng(seedFrom('melody', prompt, seed ?? null));
  const tonicHz = 196 * 2 ** (Math.floor(random() * 7) / 12);
  const beatSeconds = 60 / (80 + Math.floor(random() * 60));
  const beat = Math.round(beatSeconds * sampleRate);
  for (let start = 0, step = 0; start < total; start += beat, step++) {
    const degree = PENTATONIC[Math.floor(random() * PENTATONIC.length)];
    const length = random() < 0.25 ? beat * 2 : beat;
    renderNote(samples, sampleRate, start, Math.min(length, total - start), tonicHz * 2 ** (degree / 12), 0.22, [1, 0.5, 0.25, 0.1]);
    if (step % 4 === 0) renderNote(samples, sampleRate, start, Math.min(beat * 4, total - start), tonicHz / 2, 0.16, [1, 0.3]);
    if (length > beat) { start += beat; step++; }
  }
  return { samples: toInt16(samples), sampleRate };
}

/** Adds a note with a short attack and release (so words and notes never click). */
function renderNote(into: Float32Array, sampleRate: number, start: number, length: number, hz: number, amplitude: number, harmonics: number[]): void {
  const attack = Math.min(Math.round(0.01 * sampleRate), Math.floor(length / 2));
  const release = Math.min(Math.round(0.04 * sampleRate), Math.floor(length / 2));
  const norm = harmonics.reduce((a, b) => a + b, 0);
  for (let i = 0; i < length && start + i < into.length; i++) {
    const envelope = Math.min(1, i / Math.max(1, attack), (length - i) / Math.max(1, release));
    let value = 0;
    for (let h = 0; h < harmonics.length; h++) value += harmonics[h] * Math.sin((2 * Math.PI * hz * (h + 1) * i) / sampleRate);
    into[start + i] += (amplitude * envelope * value) / norm;
  }
}

function toInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32767)));
  return out;
}

// ---------------------------------------------------------------- text hidden in the samples

const LSB_MAGIC = Buffer.from('SIMT');

/**
 * Hides the text in the least significant bit of the first samples (inaudible), so lossless outputs
 * without a metadata container (raw `pcm`) still carry what was said. Text that does not fit is cut.
 */
export function embedTextInSamples(samples: Int16Array, text: string): void {
  const capacityBytes = Math.floor(samples.length / 8) - LSB_MAGIC.length - 4;
  if (capacityBytes <= 0) return;
  let body = Buffer.from(text, 'utf8');
  if (body.length > capacityBytes) body = Buffer.from(body.subarray(0, capacityBytes).toString('utf8').replace(/\uFFFD+$/, ''), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const payload = Buffer.concat([LSB_MAGIC, length, body]);
  for (let i = 0; i < payload.length * 8; i++) {
    const bit = (payload[i >> 3] >> (7 - (i & 7))) & 1;
    samples[i] = (samples[i] & ~1) | bit;
  }
}

/** Reads text hidden by `embedTextInSamples`, or null when the samples carry none. */
export function extractTextFromSamples(samples: Int16Array): string | null {
  const readByte = (index: number): number => {
    let byte = 0;
    for (let bit = 0; bit < 8; bit++) byte = (byte << 1) | (samples[index * 8 + bit] & 1);
    return byte;
  };
  if (samples.length < (LSB_MAGIC.length + 4) * 8) return null;
  for (let i = 0; i < LSB_MAGIC.length; i++) if (readByte(i) !== LSB_MAGIC[i]) return null;
  const header = LSB_MAGIC.length;
  const length = ((readByte(header) << 24) | (readByte(header + 1) << 16) | (readByte(header + 2) << 8) | readByte(header + 3)) >>> 0;
  if ((header + 4 + length) * 8 > samples.length) return null;
  const body = Buffer.alloc(length);
  for (let i = 0; i < length; i++) body[i] = readByte(header + 4 + i);
  return body.toString('utf8');
}

/** Interprets little-endian 16-bit PCM bytes as samples (copying when unaligned). */
export function samplesFromBytes(bytes: Uint8Array): Int16Array {
  const even = bytes.length - (bytes.length % 2);
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, even / 2);
  return new Int16Array(Uint8Array.from(bytes.subarray(0, even)).buffer);
}

export function samplesToBytes(samples: Int16Array): Buffer {
  return Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
}
