/**
 * What audio bytes are and how long they play, read from the bytes alone: the container (WAV, FLAC, Ogg
 * Opus/Vorbis/FLAC/Speex, ADTS AAC, MPEG audio, MP4/M4A, WebM/Matroska) and its duration, for per-second
 * prices and for refusing a file that is not audio before anything is charged. Pure functions over a
 * Buffer; the container readers are exported for code that wants more than the duration (tags, chunks).
 */
import { ImageMediaType, sniffImageType, sniffMediaType } from './media-types';

export type AudioFormat = 'wav' | 'mp3' | 'flac' | 'opus' | 'ogg' | 'aac' | 'm4a' | 'webm' | 'pcm' | 'unknown';

export interface AudioHints {
  filename?: string;
  mediaType?: string;
}

export interface AudioProbe {
  /** `ogg` is Ogg Vorbis, FLAC or Speex (Ogg Opus is `opus`); `m4a` any MP4 with a sound track. */
  format: AudioFormat;
  seconds: number;
}

/** Raw PCM as OpenAI's speech endpoint produces it: 24 kHz, 16-bit, mono. */
export const PCM_BYTES_PER_SECOND = 48_000;
/** Bytes per second assumed for audio whose length the container does not tell (128 kbit/s). */
export const FALLBACK_BYTES_PER_SECOND = 16_000;

/**
 * The container and its playing time. Raw PCM has no signature: the bytes count as PCM only when the
 * hints say so (`audio/pcm`, a `.pcm` or `.raw` name) and they do not announce another kind of file.
 * For `unknown` bytes `seconds` is their length at {@link FALLBACK_BYTES_PER_SECOND}, a guess.
 */
export function probeAudio(bytes: Buffer, hints: AudioHints = {}): AudioProbe {
  const container = probeContainer(bytes);
  if (container) return container;
  if (hintsPcm(hints) && !announcesOtherMedia(bytes)) return { format: 'pcm', seconds: bytes.length / PCM_BYTES_PER_SECOND };
  return { format: 'unknown', seconds: bytes.length / FALLBACK_BYTES_PER_SECOND };
}

/**
 * Whether the bytes are audio a transcription model can take: a recognised container (flac, mp3/mpeg/mpga,
 * mp4/m4a with a sound track, ogg, wav, webm with an audio track, and ADTS aac), or raw PCM the hints
 * declare. A text file, an image or a video without sound is not.
 */
export function isAudio(bytes: Buffer, hints: AudioHints = {}): boolean {
  return probeAudio(bytes, hints).format !== 'unknown';
}

/** The image type the magic bytes announce (PNG, JPEG, WebP, GIF), else null. */
export function sniffImage(bytes: Buffer): ImageMediaType | null {
  return sniffImageType(bytes);
}

function probeContainer(bytes: Buffer): AudioProbe | null {
  const wave = readWave(bytes);
  if (wave) return { format: 'wav', seconds: wave.seconds };
  const flac = readFlac(bytes);
  if (flac) return { format: 'flac', seconds: flac.seconds };
  const ogg = readOggAudio(bytes);
  if (ogg) return { format: ogg.codec === 'opus' ? 'opus' : 'ogg', seconds: ogg.seconds };
  const mp4 = readMp4Audio(bytes);
  if (mp4) return { format: 'm4a', seconds: mp4.seconds };
  const matroska = readMatroskaAudio(bytes);
  if (matroska) return { format: 'webm', seconds: matroska.seconds };
  const adts = readAdts(bytes);
  if (adts) return { format: 'aac', seconds: adts.seconds };
  const mpeg = readMpegAudio(bytes);
  if (mpeg) return { format: 'mp3', seconds: mpeg.seconds };
  return null;
}

function hintsPcm(hints: AudioHints): boolean {
  const type = (hints.mediaType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'audio/pcm' || /\.(pcm|raw)$/i.test(hints.filename ?? '');
}

/** An image, a PDF, an archive...: a signature of something other than audio (16-bit samples may look like an MPEG sync). */
function announcesOtherMedia(bytes: Buffer): boolean {
  const sniffed = sniffMediaType(bytes);
  return sniffed !== null && !sniffed.startsWith('audio/');
}

// --- shared helpers ---------------------------------------------------------------------------------

function latin1(bytes: Buffer, from: number, to: number): string {
  return bytes.toString('latin1', from, Math.min(to, bytes.length));
}

/** Bytes an ID3v2 tag takes at `offset` (header, body and footer), 0 when there is none. */
export function id3v2Size(bytes: Buffer, offset = 0): number {
  if (offset + 10 > bytes.length || latin1(bytes, offset, offset + 3) !== 'ID3') return 0;
  const body = ((bytes[offset + 6] & 0x7f) << 21) | ((bytes[offset + 7] & 0x7f) << 14) | ((bytes[offset + 8] & 0x7f) << 7) | (bytes[offset + 9] & 0x7f);
  return 10 + body + (bytes[offset + 5] & 0x10 ? 10 : 0);
}

/** Where the audio frames start: past an ID3v2 tag and the zero padding some writers leave after it. */
function audioStart(bytes: Buffer): number {
  let offset = id3v2Size(bytes);
  if (offset > 0) while (offset < bytes.length && bytes[offset] === 0) offset++;
  return offset;
}

/** The body range of a chunk, box or block inside a file. */
export interface ByteRange {
  start: number;
  end: number;
}

// --- WAV ----------------------------------------------------------------------------------------------

export interface WaveLayout {
  formatTag: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  bitsPerSample: number;
  /** Where the sample bytes start and how many there are (clamped to the file). */
  dataOffset: number;
  dataLength: number;
  seconds: number;
  /** Every chunk after the RIFF header, in order. */
  chunks: Array<ByteRange & { id: string }>;
}

/** Reads the chunks of a RIFF/WAVE file; null when it is not one. Seconds: data length / byte rate. */
export function readWave(bytes: Buffer): WaveLayout | null {
  if (bytes.length < 12 || latin1(bytes, 0, 4) !== 'RIFF' || latin1(bytes, 8, 12) !== 'WAVE') return null;
  const wave: WaveLayout = { formatTag: 0, channels: 0, sampleRate: 0, byteRate: 0, bitsPerSample: 0, dataOffset: 0, dataLength: 0, seconds: 0, chunks: [] };
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = latin1(bytes, offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    const start = offset + 8;
    const end = Math.min(bytes.length, start + size);
    wave.chunks.push({ id, start, end });
    if (id === 'fmt ' && end - start >= 16) {
      wave.formatTag = bytes.readUInt16LE(start);
      wave.channels = bytes.readUInt16LE(start + 2);
      wave.sampleRate = bytes.readUInt32LE(start + 4);
      wave.byteRate = bytes.readUInt32LE(start + 8);
      wave.bitsPerSample = bytes.readUInt16LE(start + 14);
    } else if (id === 'data') {
      wave.dataOffset = start;
      wave.dataLength = end - start;
    }
    offset = start + size + (size % 2);
  }
  const byteRate = wave.byteRate || (wave.sampleRate * wave.channels * wave.bitsPerSample) / 8;
  wave.seconds = byteRate > 0 ? wave.dataLength / byteRate : 0;
  return wave;
}

// --- FLAC ---------------------------------------------------------------------------------------------

export interface FlacLayout {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** 0 when the encoder did not know it. */
  totalSamples: number;
  seconds: number;
  /** The metadata blocks (0 STREAMINFO, 4 VORBIS_COMMENT, ...). */
  blocks: Array<ByteRange & { type: number }>;
}

/** Reads the metadata blocks of a FLAC stream (after an optional ID3v2 tag); null when it is not one. */
export function readFlac(bytes: Buffer): FlacLayout | null {
  let offset = id3v2Size(bytes);
  if (latin1(bytes, offset, offset + 4) !== 'fLaC') return null;
  offset += 4;
  const flac: FlacLayout = { sampleRate: 0, channels: 0, bitsPerSample: 0, totalSamples: 0, seconds: 0, blocks: [] };
  while (offset + 4 <= bytes.length) {
    const last = (bytes[offset] & 0x80) !== 0;
    const type = bytes[offset] & 0x7f;
    const start = offset + 4;
    const end = Math.min(bytes.length, start + bytes.readUIntBE(offset + 1, 3));
    flac.blocks.push({ type, start, end });
    if (type === 0 && end - start >= 18) readStreamInfo(bytes.subarray(start, end), flac);
    offset = end;
    if (last) break;
  }
  if (flac.sampleRate === 0) return null;
  // Without a sample count, a guess: FLAC keeps about half the PCM bytes.
  const pcmBytesPerSecond = (flac.sampleRate * flac.channels * flac.bitsPerSample) / 8;
  flac.seconds = flac.totalSamples > 0 ? flac.totalSamples / flac.sampleRate : (bytes.length - offset) / (pcmBytesPerSecond / 2);
  return flac;
}

function readStreamInfo(body: Buffer, into: { sampleRate: number; channels: number; bitsPerSample: number; totalSamples: number }): void {
  into.sampleRate = (body[10] << 12) | (body[11] << 4) | (body[12] >> 4);
  into.channels = ((body[12] >> 1) & 0x07) + 1;
  into.bitsPerSample = (((body[12] & 1) << 4) | (body[13] >> 4)) + 1;
  into.totalSamples = (body[13] & 0x0f) * 2 ** 32 + body.readUInt32BE(14);
}

// --- Ogg ----------------------------------------------------------------------------------------------

export interface OggPageView {
  offset: number;
  flags: number;
  /** -1 when no packet ends on the page. */
  granule: bigint;
  serial: number;
  sequence: number;
  segments: number[];
  body: Buffer;
}

/** Splits an Ogg stream into pages (checksums unchecked); stops at the first thing that is not a page. */
export function oggPages(bytes: Buffer): OggPageView[] {
  const pages: OggPageView[] = [];
  let offset = 0;
  while (offset + 27 <= bytes.length && latin1(bytes, offset, offset + 4) === 'OggS') {
    const count = bytes[offset + 26];
    const segments = Array.from(bytes.subarray(offset + 27, offset + 27 + count));
    const bodyStart = offset + 27 + count;
    const end = bodyStart + segments.reduce((a, b) => a + b, 0);
    if (end > bytes.length) break;
    pages.push({
      offset,
      flags: bytes[offset + 5],
      granule: bytes.readBigInt64LE(offset + 6),
      serial: bytes.readUInt32LE(offset + 14),
      sequence: bytes.readUInt32LE(offset + 18),
      segments,
      body: bytes.subarray(bodyStart, end),
    });
    offset = end;
  }
  return pages;
}

export interface OggAudio {
  codec: 'opus' | 'vorbis' | 'flac' | 'speex';
  serial: number;
  channels: number;
  /** Opus: the encoder delay at 48 kHz, not part of the playing time. */
  preSkip: number;
  /** The rate granule positions count in (48 kHz for Opus). */
  granuleRate: number;
  seconds: number;
}

/** The codecs an Ogg audio stream's first packet (on its BOS page) names, and what it tells. */
const OGG_CODECS: Array<{ codec: OggAudio['codec']; magic: string; read: (head: Buffer) => { channels: number; rate: number; preSkip: number } | null }> = [
  { codec: 'opus', magic: 'OpusHead', read: (h) => (h.length >= 19 ? { channels: h[9], rate: 48_000, preSkip: h.readUInt16LE(10) } : null) },
  { codec: 'vorbis', magic: '\x01vorbis', read: (h) => (h.length >= 16 ? { channels: h[11], rate: h.readUInt32LE(12), preSkip: 0 } : null) },
  {
    codec: 'flac', magic: '\x7fFLAC', read: (h) => {
      if (h.length < 51 || latin1(h, 9, 13) !== 'fLaC') return null;
      const info = { sampleRate: 0, channels: 0, bitsPerSample: 0, totalSamples: 0 };
      readStreamInfo(h.subarray(17), info);
      return { channels: info.channels, rate: info.sampleRate, preSkip: 0 };
    },
  },
  { codec: 'speex', magic: 'Speex   ', read: (h) => (h.length >= 52 ? { channels: h.readUInt32LE(48), rate: h.readUInt32LE(36), preSkip: 0 } : null) },
];

/**
 * The first audio stream of an Ogg file (Opus, Vorbis, FLAC or Speex; a Theora video stream beside it is
 * passed over); null when there is none. Seconds: the stream's last granule position minus the pre-skip.
 */
export function readOggAudio(bytes: Buffer): OggAudio | null {
  if (latin1(bytes, 0, 4) !== 'OggS') return null;
  const pages = oggPages(bytes);
  for (const page of pages) {
    if ((page.flags & 0x02) === 0) break; // the BOS pages of every stream come first
    const codec = OGG_CODECS.find((c) => latin1(page.body, 0, c.magic.length) === c.magic);
    const head = codec?.read(page.body);
    if (!codec || !head || head.rate <= 0) continue;
    let last = 0n;
    for (const other of pages) if (other.serial === page.serial && other.granule > last) last = other.granule;
    return {
      codec: codec.codec, serial: page.serial, channels: head.channels, preSkip: head.preSkip, granuleRate: head.rate,
      seconds: Math.max(0, Number(last) - head.preSkip) / head.rate,
    };
  }
  return null;
}

// --- ADTS AAC -----------------------------------------------------------------------------------------

const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** What walking a stream of audio frames (ADTS, MPEG) tells. */
export interface FrameWalk {
  sampleRate: number;
  channels: number;
  frames: number;
  seconds: number;
  /** Offset of the first frame, and just past the last one walked. */
  firstFrameOffset: number;
  endOffset: number;
}

export type AdtsLayout = FrameWalk;

/**
 * Walks ADTS frames (after an optional ID3v2 tag), 1024 samples per raw data block; null unless the bytes
 * start with a frame that is followed by another (or ends the file). `onFrame` sees each frame's payload.
 */
export function readAdts(bytes: Buffer, onFrame?: (payload: Buffer) => void): AdtsLayout | null {
  const first = audioStart(bytes);
  const layout: AdtsLayout = { sampleRate: 0, channels: 0, frames: 0, seconds: 0, firstFrameOffset: first, endOffset: first };
  let samples = 0;
  let offset = first;
  while (offset + 7 <= bytes.length && bytes[offset] === 0xff && (bytes[offset + 1] & 0xf6) === 0xf0) {
    const rateIndex = (bytes[offset + 2] >> 2) & 0x0f;
    const frameLength = ((bytes[offset + 3] & 0x03) << 11) | (bytes[offset + 4] << 3) | (bytes[offset + 5] >> 5);
    const headerLength = bytes[offset + 1] & 0x01 ? 7 : 9;
    const sampleRate = ADTS_RATES[rateIndex] ?? 0;
    if (sampleRate === 0 || frameLength < headerLength || (layout.frames > 0 && sampleRate !== layout.sampleRate)) break;
    layout.sampleRate = sampleRate;
    layout.channels = ((bytes[offset + 2] & 0x01) << 2) | (bytes[offset + 3] >> 6);
    layout.frames++;
    samples += ((bytes[offset + 6] & 0x03) + 1) * 1024;
    onFrame?.(bytes.subarray(offset + headerLength, Math.min(bytes.length, offset + frameLength)));
    offset += frameLength;
  }
  layout.endOffset = Math.min(offset, bytes.length);
  if (!framesConvince(bytes, layout)) return null;
  layout.seconds = samples / layout.sampleRate;
  return layout;
}

/** One frame is only trusted when it ends the file (or an ID3v1 tag follows); two or more always are. */
function framesConvince(bytes: Buffer, walk: { frames: number; endOffset: number }): boolean {
  if (walk.frames >= 2) return true;
  return walk.frames === 1 && (walk.endOffset >= bytes.length || latin1(bytes, walk.endOffset, walk.endOffset + 3) === 'TAG');
}

// --- MPEG audio (MP3) ---------------------------------------------------------------------------------

/** kbit/s by bitrate index: MPEG-1 layers I, II, III, then MPEG-2/2.5 layer I, then layers II and III. */
const MPEG_BITRATES = [
  [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
];
/** Sample rates by the header's version bits (3 MPEG-1, 2 MPEG-2, 0 MPEG-2.5). */
const MPEG_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };
const MPEG_VERSIONS: Record<number, number> = { 3: 1, 2: 2, 0: 2.5 };

interface MpegFrame {
  version: number;
  /** 1, 2 or 3. */
  layer: number;
  sampleRate: number;
  samples: number;
  length: number;
  channels: number;
  crc: boolean;
}

function mpegFrame(header: number): MpegFrame | null {
  if (header >>> 21 !== 0x7ff) return null;
  const version = (header >>> 19) & 3;
  const layer = 4 - ((header >>> 17) & 3);
  const bitrateIndex = (header >>> 12) & 15;
  const rateIndex = (header >>> 10) & 3;
  if (version === 1 || layer === 4 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const sampleRate = MPEG_RATES[version][rateIndex];
  const bitrate = MPEG_BITRATES[version === 3 ? layer - 1 : layer === 1 ? 3 : 4][bitrateIndex] * 1000;
  const padding = (header >>> 9) & 1;
  const samples = layer === 1 ? 384 : layer === 3 && version !== 3 ? 576 : 1152;
  const length = layer === 1 ? (Math.floor((12 * bitrate) / sampleRate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / sampleRate) + padding;
  return { version, layer, sampleRate, samples, length, channels: ((header >>> 6) & 3) === 3 ? 1 : 2, crc: ((header >>> 16) & 1) === 0 };
}

/** `frames` counts audio frames: a Xing/Info/VBRI header's frame is not one. */
export interface MpegAudioLayout extends FrameWalk {
  /** 1 for MPEG-1, 2 for MPEG-2, 2.5 for MPEG-2.5. */
  version: number;
  layer: number;
}

/**
 * Walks MPEG audio frames (layers I to III, MPEG-1/2/2.5) after an optional ID3v2 tag, summing samples
 * per frame; a Xing/Info or VBRI header's frame count wins when there is one. Null unless the bytes start
 * with a frame followed by another of the same kind (or ending the file).
 */
export function readMpegAudio(bytes: Buffer): MpegAudioLayout | null {
  const first = audioStart(bytes);
  const head = first + 4 <= bytes.length ? mpegFrame(bytes.readUInt32BE(first)) : null;
  if (!head) return null;
  const layout: MpegAudioLayout = {
    version: MPEG_VERSIONS[head.version], layer: head.layer, sampleRate: head.sampleRate, channels: head.channels,
    frames: 0, seconds: 0, firstFrameOffset: first, endOffset: first,
  };
  const declaredFrames = vbrFrameCount(bytes, first, head);
  let walked = 0;
  let offset = first;
  while (offset + 4 <= bytes.length) {
    const frame = mpegFrame(bytes.readUInt32BE(offset));
    if (!frame || frame.version !== head.version || frame.layer !== head.layer || frame.sampleRate !== head.sampleRate) break;
    walked++;
    offset += frame.length;
  }
  layout.endOffset = Math.min(offset, bytes.length);
  if (!framesConvince(bytes, { frames: walked, endOffset: layout.endOffset })) return null;
  layout.frames = declaredFrames ?? walked;
  layout.seconds = (layout.frames * head.samples) / head.sampleRate;
  return layout;
}

/** The audio frame count a Xing/Info or VBRI header in the first frame declares, else null. */
function vbrFrameCount(bytes: Buffer, offset: number, frame: MpegFrame): number | null {
  const sideInfo = frame.layer !== 3 ? 0 : frame.version === 3 ? (frame.channels === 1 ? 17 : 32) : frame.channels === 1 ? 9 : 17;
  const xing = offset + 4 + (frame.crc ? 2 : 0) + sideInfo;
  const tag = latin1(bytes, xing, xing + 4);
  if ((tag === 'Xing' || tag === 'Info') && xing + 12 <= bytes.length && bytes.readUInt32BE(xing + 4) & 1) return bytes.readUInt32BE(xing + 8);
  const vbri = offset + 36;
  if (latin1(bytes, vbri, vbri + 4) === 'VBRI' && vbri + 18 <= bytes.length) return bytes.readUInt32BE(vbri + 14);
  return null;
}

// --- MP4 / M4A ----------------------------------------------------------------------------------------

export interface Mp4Box {
  type: string;
  start: number;
  size: number;
  /** Where the box's content begins (after its header). */
  bodyStart: number;
}

/** Lists the ISO BMFF boxes directly inside `data[start, end)`. */
export function readBoxes(data: Buffer, start = 0, end = data.length): Mp4Box[] {
  const boxes: Mp4Box[] = [];
  let offset = start;
  while (offset + 8 <= end) {
    let size = data.readUInt32BE(offset);
    const type = latin1(data, offset + 4, offset + 8);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > end) break;
      size = Number(data.readBigUInt64BE(offset + 8));
      header = 16;
    } else if (size === 0) size = end - offset;
    if (size < header || offset + size > end) break;
    boxes.push({ type, start: offset, size, bodyStart: offset + header });
    offset += size;
  }
  return boxes;
}

function childBox(data: Buffer, parent: Mp4Box, type: string): Mp4Box | undefined {
  return readBoxes(data, parent.bodyStart, parent.start + parent.size).find((b) => b.type === type);
}

/** Timescale and duration of an mvhd or mdhd box (versions 0 and 1). */
function boxDuration(data: Buffer, box: Mp4Box | undefined): number {
  const v1 = box !== undefined && data[box.bodyStart] === 1;
  if (!box || box.bodyStart + (v1 ? 32 : 20) > box.start + box.size) return 0;
  const timescale = data.readUInt32BE(box.bodyStart + (v1 ? 20 : 12));
  const duration = v1 ? Number(data.readBigUInt64BE(box.bodyStart + 24)) : data.readUInt32BE(box.bodyStart + 16);
  return timescale > 0 && duration !== 0xffffffff ? duration / timescale : 0;
}

/**
 * An ISO BMFF file (ftyp first) whose moov holds a sound track; null otherwise (an image in HEIF/AVIF,
 * a silent video). Seconds: the movie header's duration, else the sound track's, else a size estimate.
 */
export function readMp4Audio(bytes: Buffer): { seconds: number } | null {
  if (latin1(bytes, 4, 8) !== 'ftyp') return null;
  const top = readBoxes(bytes);
  const moov = top.find((b) => b.type === 'moov');
  if (top[0]?.type !== 'ftyp' || !moov) return null;
  const sound = readBoxes(bytes, moov.bodyStart, moov.start + moov.size)
    .filter((b) => b.type === 'trak')
    .map((trak) => childBox(bytes, trak, 'mdia'))
    .find((mdia) => {
      const hdlr = mdia && childBox(bytes, mdia, 'hdlr');
      return hdlr !== undefined && latin1(bytes, hdlr.bodyStart + 8, hdlr.bodyStart + 12) === 'soun';
    });
  if (!sound) return null;
  const seconds = boxDuration(bytes, childBox(bytes, moov, 'mvhd')) || boxDuration(bytes, childBox(bytes, sound, 'mdhd'));
  return { seconds: seconds || bytes.length / FALLBACK_BYTES_PER_SECOND };
}

// --- WebM / Matroska ----------------------------------------------------------------------------------

const EBML = {
  header: 0x1a45dfa3, docType: 0x4282, segment: 0x18538067, info: 0x1549a966, timecodeScale: 0x2ad7b1, duration: 0x4489,
  tracks: 0x1654ae6b, trackEntry: 0xae, trackType: 0x83, cluster: 0x1f43b675, timecode: 0xe7, blockGroup: 0xa0, block: 0xa1, simpleBlock: 0xa3,
};
/** Elements read by descending into them, so that an unknown size (live recordings) does not matter. */
const EBML_MASTERS = new Set([EBML.header, EBML.segment, EBML.info, EBML.tracks, EBML.trackEntry, EBML.cluster, EBML.blockGroup]);

/** An EBML variable-length integer: with its length marker (element ids) or without (sizes). */
function ebmlNumber(bytes: Buffer, offset: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | null {
  const first = bytes[offset];
  if (first === undefined || first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (offset + length > bytes.length) return null;
  let value = keepMarker ? first : first & (0xff >> length);
  let unknown = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[offset + i];
    unknown &&= bytes[offset + i] === 0xff;
  }
  return { value, length, unknown: unknown && !keepMarker };
}

function ebmlUint(bytes: Buffer, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) value = value * 256 + bytes[i];
  return value;
}

/**
 * A WebM or Matroska file with an audio track; null otherwise. Seconds: the segment's Duration, else (as
 * in recordings made live) the timestamp of the last block.
 */
export function readMatroskaAudio(bytes: Buffer): { docType: string; seconds: number } | null {
  if (bytes.length < 4 || bytes.readUInt32BE(0) !== EBML.header) return null;
  let docType = '';
  let scale = 1_000_000;
  let duration: number | null = null;
  let hasAudio = false;
  let clusterTime = 0;
  let lastBlock = 0;
  let offset = 0;
  while (offset < bytes.length) {
    const id = ebmlNumber(bytes, offset, true);
    const size = id && ebmlNumber(bytes, offset + id.length, false);
    if (!id || !size) break;
    const start = offset + id.length + size.length;
    if (EBML_MASTERS.has(id.value)) {
      offset = start;
      continue;
    }
    if (size.unknown) break;
    const end = Math.min(bytes.length, start + size.value);
    if (id.value === EBML.docType) docType = latin1(bytes, start, end).replace(/\0+$/, '');
    else if (id.value === EBML.timecodeScale) scale = ebmlUint(bytes, start, end);
    else if (id.value === EBML.duration && end - start === 4) duration = bytes.readFloatBE(start);
    else if (id.value === EBML.duration && end - start === 8) duration = bytes.readDoubleBE(start);
    else if (id.value === EBML.trackType) hasAudio ||= ebmlUint(bytes, start, end) === 2;
    else if (id.value === EBML.timecode) clusterTime = ebmlUint(bytes, start, end);
    else if (id.value === EBML.simpleBlock || id.value === EBML.block) {
      const track = ebmlNumber(bytes, start, false);
      if (track && start + track.length + 2 <= end) lastBlock = Math.max(lastBlock, clusterTime + bytes.readInt16BE(start + track.length));
    }
    offset = start + size.value;
  }
  if ((docType !== 'webm' && docType !== 'matroska') || !hasAudio) return null;
  return { docType, seconds: ((duration ?? lastBlock) * scale) / 1e9 };
}
