/**
 * Uploaded media as the request workflow sees it: a reference to bytes in object storage (never the bytes
 * themselves), plus what the API learned while the bytes streamed past: their type from the magic bytes,
 * their hash (for Idempotency-Key) and, for audio, a duration estimate to reserve credits on.
 */

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

/** Image container from its first bytes: the formats image models accept. */
export function sniffImageType(head: Buffer): 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif' | null {
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  if (head.length >= 6 && /^GIF8[79]a$/.test(head.toString('latin1', 0, 6))) return 'image/gif';
  return null;
}

const AUDIO_EXTENSIONS: Record<string, string> = {
  mp3: 'audio/mpeg', mpga: 'audio/mpeg', mpeg: 'audio/mpeg', m4a: 'audio/mp4', mp4: 'audio/mp4', wav: 'audio/wav', webm: 'audio/webm',
  ogg: 'audio/ogg', oga: 'audio/ogg', opus: 'audio/ogg', flac: 'audio/flac', aac: 'audio/aac', pcm: 'audio/pcm',
};

/**
 * The audio's media type: from its first bytes where they are unambiguous, else the declared type, else
 * the file name's extension. Providers route on it, and clients often send application/octet-stream.
 */
export function audioMediaType(head: Buffer, declared: string, filename: string): string {
  const latin = (from: number, to: number) => head.toString('latin1', from, to);
  if (head.length >= 12 && latin(0, 4) === 'RIFF' && latin(8, 12) === 'WAVE') return 'audio/wav';
  if (head.length >= 4 && latin(0, 4) === 'fLaC') return 'audio/flac';
  if (head.length >= 4 && latin(0, 4) === 'OggS') return 'audio/ogg';
  if (head.length >= 3 && latin(0, 3) === 'ID3') return 'audio/mpeg';
  if (head.length >= 12 && latin(4, 8) === 'ftyp') return 'audio/mp4';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return 'audio/webm';
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xf6) === 0xf0) return 'audio/aac';
  if (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe0) === 0xe0) return 'audio/mpeg';
  const type = declared.split(';')[0].trim().toLowerCase();
  if (type && type !== 'application/octet-stream') return type;
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return (extension && AUDIO_EXTENSIONS[extension]) || 'application/octet-stream';
}

/**
 * Bytes per second assumed for compressed audio when reserving: 64 kbit/s, the low end of speech
 * recordings, so the hold errs on the high side and the settlement (measured length) gives back.
 */
export const COMPRESSED_BYTES_PER_SECOND_ESTIMATE = 8_000;
/** OpenAI's raw `pcm`: 24 kHz, 16-bit, mono. */
const PCM_BYTES_PER_SECOND = 48_000;

/**
 * Playing time to reserve for: exact for WAV (from its header's byte rate) and raw PCM, an estimate from
 * the size otherwise. At least one second.
 */
export function estimateAudioSeconds(head: Buffer, bytes: number, mediaType: string): number {
  const wav = wavByteRate(head);
  let seconds: number;
  if (wav) seconds = Math.max(0, bytes - wav.dataOffset) / wav.byteRate;
  else if (mediaType === 'audio/pcm') seconds = bytes / PCM_BYTES_PER_SECOND;
  else seconds = bytes / COMPRESSED_BYTES_PER_SECOND_ESTIMATE;
  return Math.max(1, Math.ceil(seconds));
}

/** The byte rate in a WAV header and where the samples start (searching the chunks in the head). */
function wavByteRate(head: Buffer): { byteRate: number; dataOffset: number } | null {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return null;
  let byteRate = 0;
  for (let at = 12; at + 8 <= head.length;) {
    const id = head.toString('latin1', at, at + 4);
    const size = head.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 16 <= head.length) byteRate = head.readUInt32LE(at + 16);
    if (id === 'data') return byteRate > 0 ? { byteRate, dataOffset: at + 8 } : null;
    at += 8 + size + (size % 2);
  }
  return null;
}
