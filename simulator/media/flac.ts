/**
 * A small FLAC encoder: 16-bit mono, fixed 4096-sample blocks, each subframe CONSTANT, FIXED (order 2,
 * Rice-coded residual) or VERBATIM, whichever is smallest. STREAMINFO carries the MD5 of the samples;
 * a VORBIS_COMMENT block carries the spoken text.
 */
import { createHash } from 'node:crypto';
import { readFlac } from '../../core/media-probe';
import { BitWriter } from './bit-writer';
import { crc16, crc8 } from './checksums';
import { AudioTags, PcmAudio, samplesToBytes } from './synth';
import { encodeVorbisComments, parseVorbisComments, tagsToComments } from './vorbis-comment';

const BLOCK_SIZE = 4096;
const BITS_PER_SAMPLE = 16;

export function encodeFlac(audio: PcmAudio, tags: AudioTags = {}): Buffer {
  const frames: Buffer[] = [];
  let minFrame = Infinity;
  let maxFrame = 0;
  for (let start = 0, index = 0; start < audio.samples.length; start += BLOCK_SIZE, index++) {
    const frame = encodeFrame(audio.samples.subarray(start, start + BLOCK_SIZE), index, audio.sampleRate);
    minFrame = Math.min(minFrame, frame.length);
    maxFrame = Math.max(maxFrame, frame.length);
    frames.push(frame);
  }
  const streamInfo = new BitWriter(34);
  // Block sizes exclude the (possibly shorter) last block, so a fixed-size stream has min == max.
  const blockSize = frames.length > 1 ? BLOCK_SIZE : audio.samples.length % BLOCK_SIZE || BLOCK_SIZE;
  streamInfo.writeBits(blockSize, 16);
  streamInfo.writeBits(blockSize, 16);
  streamInfo.writeBits(Number.isFinite(minFrame) ? minFrame : 0, 24);
  streamInfo.writeBits(maxFrame, 24);
  streamInfo.writeBits(audio.sampleRate, 20);
  streamInfo.writeBits(0, 3); // channels - 1
  streamInfo.writeBits(BITS_PER_SAMPLE - 1, 5);
  streamInfo.writeBits(Math.floor(audio.samples.length / 2 ** 32), 4);
  streamInfo.writeBits(audio.samples.length >>> 0, 32);
  streamInfo.writeBytes(createHash('md5').update(samplesToBytes(audio.samples)).digest());
  const comments = encodeVorbisComments(tagsToComments(tags));
  return Buffer.concat([
    Buffer.from('fLaC', 'latin1'),
    metadataBlock(0, streamInfo.bytes(), false),
    metadataBlock(4, comments, true),
    ...frames,
  ]);
}

function metadataBlock(type: number, body: Buffer, last: boolean): Buffer {
  const header = Buffer.alloc(4);
  header[0] = (last ? 0x80 : 0) | type;
  header.writeUIntBE(body.length, 1, 3);
  return Buffer.concat([header, body]);
}

function encodeFrame(block: Int16Array, index: number, sampleRate: number): Buffer {
  const out = new BitWriter(block.length * 2 + 64);
  out.writeBits(0b11111111111110, 14);
  out.writeBits(0, 1); // reserved
  out.writeBits(0, 1); // fixed block size stream
  const blockCode = block.length === BLOCK_SIZE ? 12 : 7;
  out.writeBits(blockCode, 4);
  const rateCode = SAMPLE_RATE_CODES[sampleRate] ?? 13;
  out.writeBits(rateCode, 4);
  out.writeBits(0, 4); // mono
  out.writeBits(0b100, 3); // 16 bits per sample
  out.writeBits(0, 1);
  writeUtf8Number(out, index);
  if (blockCode === 7) out.writeBits(block.length - 1, 16);
  if (rateCode === 13) out.writeBits(sampleRate, 16);
  out.writeBits(crc8(out.bytes()), 8);
  writeSubframe(out, block);
  out.alignWithZeros();
  out.writeBits(crc16(out.bytes()), 16);
  return Buffer.from(out.bytes());
}

const SAMPLE_RATE_CODES: Record<number, number> = {
  88200: 1, 176400: 2, 192000: 3, 8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10, 96000: 11,
};

/** FLAC's "UTF-8" coding of the frame number (up to 36 bits). */
function writeUtf8Number(out: BitWriter, value: number): void {
  if (value < 0x80) {
    out.writeBits(value, 8);
    return;
  }
  const limits = [0x800, 0x10000, 0x200000, 0x4000000, 0x80000000];
  let continuationBytes = limits.findIndex((limit) => value < limit) + 1;
  if (continuationBytes === 0) continuationBytes = 6;
  const leadingOnes = continuationBytes + 1;
  const prefix = (0xff << (8 - leadingOnes)) & 0xff;
  out.writeBits(prefix | Math.floor(value / 2 ** (6 * continuationBytes)), 8);
  for (let i = continuationBytes - 1; i >= 0; i--) out.writeBits(0x80 | (Math.floor(value / 2 ** (6 * i)) & 0x3f), 8);
}

function writeSubframe(out: BitWriter, block: Int16Array): void {
  if (block.every((sample) => sample === block[0])) {
    out.writeBits(0, 1);
    out.writeBits(0b000000, 6); // CONSTANT
    out.writeBits(0, 1);
    out.writeBits(block[0] & 0xffff, BITS_PER_SAMPLE);
    return;
  }
  const order = Math.min(2, block.length);
  const residual = new Int32Array(block.length - order);
  for (let i = order; i < block.length; i++) residual[i - order] = block[i] - 2 * block[i - 1] + block[i - 2];
  const { parameter, bits } = bestRiceParameter(residual);
  const fixedBits = order * BITS_PER_SAMPLE + 2 + 4 + 4 + bits;
  if (fixedBits >= block.length * BITS_PER_SAMPLE || parameter > 14) {
    out.writeBits(0, 1);
    out.writeBits(0b000001, 6); // VERBATIM
    out.writeBits(0, 1);
    for (const sample of block) out.writeBits(sample & 0xffff, BITS_PER_SAMPLE);
    return;
  }
  out.writeBits(0, 1);
  out.writeBits(0b001000 | order, 6); // FIXED, order 2
  out.writeBits(0, 1);
  for (let i = 0; i < order; i++) out.writeBits(block[i] & 0xffff, BITS_PER_SAMPLE);
  out.writeBits(0, 2); // Rice coding, 4-bit parameters
  out.writeBits(0, 4); // partition order 0: one partition
  out.writeBits(parameter, 4);
  for (const value of residual) {
    const folded = value >= 0 ? value * 2 : -value * 2 - 1;
    const quotient = Math.floor(folded / 2 ** parameter);
    for (let i = 0; i < quotient; i++) out.writeBit(0);
    out.writeBit(1);
    if (parameter > 0) out.writeBits(folded & (2 ** parameter - 1), parameter);
  }
}

function bestRiceParameter(residual: Int32Array): { parameter: number; bits: number } {
  let best = { parameter: 0, bits: Infinity };
  for (let parameter = 0; parameter <= 15; parameter++) {
    let bits = 0;
    for (const value of residual) {
      const folded = value >= 0 ? value * 2 : -value * 2 - 1;
      bits += Math.floor(folded / 2 ** parameter) + 1 + parameter;
    }
    if (bits < best.bits) best = { parameter, bits };
  }
  return best;
}

export interface FlacInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  totalSamples: number;
  seconds: number;
  comments: Record<string, string>;
}

/** Reads STREAMINFO (through core/media-probe) and VORBIS_COMMENT; null when the bytes are not FLAC. */
export function parseFlac(file: Buffer): FlacInfo | null {
  const flac = readFlac(file);
  if (!flac) return null;
  const { sampleRate, channels, bitsPerSample, totalSamples, seconds } = flac;
  const comments = flac.blocks.find((block) => block.type === 4);
  return { sampleRate, channels, bitsPerSample, totalSamples, seconds, comments: (comments && parseVorbisComments(file.subarray(comments.start, comments.end))?.comments) ?? {} };
}
