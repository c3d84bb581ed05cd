/**
 * Uploaded media as the request workflow sees it: a reference to bytes in object storage (never the bytes
 * themselves), plus what the API learned while the bytes streamed past: their type from the magic bytes,
 * their hash (for Idempotency-Key) and, for audio, a duration estimate to reserve credits on. Recognising
 * the bytes is core/media-probe.ts's; what is kept here is the reservation's policy.
 */
import { PCM_BYTES_PER_SECOND, probeAudio, readWave, type AudioFormat, type AudioHints } from '../core/media-probe';

export interface UploadRef {
  /** Object storage key (`uploads/<requestId>/...`). */
  key: string;
  filename: string;
  mediaType: string;
  bytes: number;
  sha256: string;
  /** Audio only: the playing time the reservation assumes (the settlement uses the measured one). */
  estimatedSeconds?: number;
}

/** How many leading bytes the API keeps of each upload to recognise it. */
export const UPLOAD_HEAD_BYTES = 64 * 1024;

/** The media type providers are given for each audio container. */
const AUDIO_MEDIA_TYPES: Record<Exclude<AudioFormat, 'unknown'>, string> = {
  wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', opus: 'audio/ogg', ogg: 'audio/ogg', aac: 'audio/aac', m4a: 'audio/mp4', webm: 'audio/webm', pcm: 'audio/pcm',
};

export interface RecognisedAudio {
  mediaType: string;
  /** The playing time to reserve for (see estimateAudioSeconds). */
  estimatedSeconds: number;
}

/**
 * Uploaded audio recognised by its bytes (core/media-probe.ts): `bytes` is the upload's head or all of it,
 * `totalBytes` its full size. Null when the bytes are not audio a transcription model takes (a text
 * file, an image, a silent video), or when a head does not reach far enough to tell.
 */
export function recogniseAudio(bytes: Buffer, totalBytes: number, hints: AudioHints = {}): RecognisedAudio | null {
  const { format } = probeAudio(bytes, hints);
  if (format === 'unknown') return null;
  return { mediaType: AUDIO_MEDIA_TYPES[format], estimatedSeconds: estimateAudioSeconds(bytes, totalBytes, format) };
}

/**
 * Bytes per second assumed for compressed audio when reserving: 64 kbit/s, the low end of speech
 * recordings, so the hold errs on the high side and the settlement (measured length) gives back.
 */
export const COMPRESSED_BYTES_PER_SECOND_ESTIMATE = 8_000;

/**
 * Playing time to reserve for: exact for WAV (from its header's byte rate) and raw PCM, an estimate from
 * the size otherwise. At least one second.
 */
export function estimateAudioSeconds(head: Buffer, totalBytes: number, format: AudioFormat): number {
  const wave = format === 'wav' ? readWave(head) : null;
  const waveRate = wave ? wave.byteRate || (wave.sampleRate * wave.channels * wave.bitsPerSample) / 8 : 0;
  let seconds: number;
  if (wave && waveRate > 0) seconds = Math.max(0, totalBytes - wave.dataOffset) / waveRate;
  else if (format === 'pcm') seconds = totalBytes / PCM_BYTES_PER_SECOND;
  else seconds = totalBytes / COMPRESSED_BYTES_PER_SECOND_ESTIMATE;
  return Math.max(1, Math.ceil(seconds));
}
