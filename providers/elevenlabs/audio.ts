/**
 * Just enough WAV handling for speech output: wrapping 16-bit mono PCM in a RIFF header, and reading the
 * length of a WAV file from its header, so `seconds` is exact for the uncompressed formats.
 */

const BYTES_PER_SAMPLE = 2;

/** Seconds of 16-bit mono PCM at `sampleRate`. */
export function pcmSeconds(pcm: Buffer, sampleRate: number): number {
  return pcm.length / (sampleRate * BYTES_PER_SAMPLE);
}

/** Wraps raw 16-bit little-endian mono PCM in a canonical 44-byte WAV header. */
export function wavFromPcm(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // linear PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * BYTES_PER_SAMPLE, 28);
  header.writeUInt16LE(BYTES_PER_SAMPLE, 32);
  header.writeUInt16LE(8 * BYTES_PER_SAMPLE, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

export function isWav(data: Buffer): boolean {
  return data.length >= 12 && data.toString('ascii', 0, 4) === 'RIFF' && data.toString('ascii', 8, 12) === 'WAVE';
}

/** Length of a WAV file from its `fmt ` and `data` chunks; null when the header cannot be read. */
export function wavSeconds(wav: Buffer): number | null {
  if (!isWav(wav)) return null;
  let byteRate = 0;
  let offset = 12;
  while (offset + 8 <= wav.length) {
    const chunkId = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (chunkId === 'fmt ' && body + 12 <= wav.length) byteRate = wav.readUInt32LE(body + 8);
    if (chunkId === 'data') {
      if (byteRate === 0) return null;
      // A streamed WAV may declare a placeholder size: count only the bytes actually present.
      return Math.min(size, wav.length - body) / byteRate;
    }
    offset = body + size + (size % 2);
  }
  return null;
}
