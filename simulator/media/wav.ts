/** RIFF/WAVE with 16-bit PCM and a LIST/INFO chunk (INAM title, ICMT spoken text, ISFT software). */
import { readWave } from '../../core/media-probe';
import { AudioTags, PcmAudio, samplesToBytes } from './synth';

export function encodeWav(audio: PcmAudio, tags: AudioTags = {}): Buffer {
  const data = samplesToBytes(audio.samples);
  const fmt = Buffer.alloc(16);
  fmt.writeUInt16LE(1, 0); // PCM
  fmt.writeUInt16LE(1, 2); // mono
  fmt.writeUInt32LE(audio.sampleRate, 4);
  fmt.writeUInt32LE(audio.sampleRate * 2, 8);
  fmt.writeUInt16LE(2, 12);
  fmt.writeUInt16LE(16, 14);
  const info: Buffer[] = [];
  if (tags.title) info.push(chunk('INAM', zeroTerminated(tags.title)));
  if (tags.text) info.push(chunk('ICMT', zeroTerminated(tags.text)));
  if (tags.software) info.push(chunk('ISFT', zeroTerminated(tags.software)));
  const chunks = [chunk('fmt ', fmt)];
  if (info.length > 0) chunks.push(chunk('LIST', Buffer.concat([Buffer.from('INFO'), ...info])));
  chunks.push(chunk('data', data));
  const body = Buffer.concat([Buffer.from('WAVE'), ...chunks]);
  return Buffer.concat([header('RIFF', body.length), body]);
}

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  formatTag: number;
  /** Where the sample bytes start and how many there are. */
  dataOffset: number;
  dataLength: number;
  /** LIST/INFO entries by their four-letter id. */
  info: Record<string, string>;
  seconds: number;
}

/** Parses a RIFF/WAVE file's chunks (the layout as core/media-probe reads it, plus LIST/INFO); null when it is not one. */
export function parseWav(file: Buffer): WavInfo | null {
  const wave = readWave(file);
  if (!wave) return null;
  const { sampleRate, channels, bitsPerSample, formatTag, dataOffset, dataLength, seconds } = wave;
  const info: Record<string, string> = {};
  for (const list of wave.chunks) {
    if (list.id !== 'LIST' || file.toString('latin1', list.start, list.start + 4) !== 'INFO') continue;
    let entry = list.start + 4;
    while (entry + 8 <= list.end) {
      const entryId = file.toString('latin1', entry, entry + 4);
      const entrySize = file.readUInt32LE(entry + 4);
      info[entryId] = file.subarray(entry + 8, Math.min(list.end, entry + 8 + entrySize)).toString('utf8').replace(/\0+$/, '');
      entry += 8 + entrySize + (entrySize % 2);
    }
  }
  return { sampleRate, channels, bitsPerSample, formatTag, dataOffset, dataLength, info, seconds };
}

function chunk(id: string, body: Buffer): Buffer {
  const parts = [header(id, body.length), body];
  if (body.length % 2 === 1) parts.push(Buffer.alloc(1));
  return Buffer.concat(parts);
}

function header(id: string, size: number): Buffer {
  const out = Buffer.alloc(8);
  out.write(id, 0, 'latin1');
  out.writeUInt32LE(size, 4);
  return out;
}

function zeroTerminated(text: string): Buffer {
  return Buffer.concat([Buffer.from(text, 'utf8'), Buffer.alloc(1)]);
}
