/**
 * A small AAC-LC encoder writing ADTS frames: long windows only (sine window), one global scalefactor
 * per frame, spectral lines quantized to at most 7 and Huffman-coded with codebook 7, bands without
 * energy sent as ZERO_HCB. That is enough for the tones we synthesize, and every AAC decoder plays it.
 * The spoken text rides in data stream elements (DSE) at the start of the stream, which decoders skip.
 */
import { readAdts } from '../../core/media-probe';
import { BitWriter } from './bit-writer';
import { CODEBOOK_7_BITS, CODEBOOK_7_CODES, SAMPLING_FREQUENCY_INDEX, SCALEFACTOR_ZERO_DIFF, SWB_OFFSETS_LONG_24K } from './aac-tables';
import { mdct } from './mdct';
import { PcmAudio } from './synth';

const FRAME_LENGTH = 1024;
const MAX_QUANT = 7;
/** Scalefactors are offset by 100 in the dequantizer: gain = 2^((sf - 100) / 4). */
const SF_OFFSET = 100;
/** Frame payload budget (a mono AAC frame may not exceed 6144 bits). */
const MAX_FRAME_BYTES = 760;
const TEXT_MAGIC = Buffer.from('SIMT');
const DSE_MAX_BYTES = 510;

const ID_SCE = 0;
const ID_DSE = 4;
const ID_END = 7;

export function encodeAdtsAac(audio: PcmAudio, spokenText?: string): Buffer {
  const frequencyIndex = SAMPLING_FREQUENCY_INDEX[audio.sampleRate];
  if (audio.sampleRate !== 24000 && audio.sampleRate !== 22050) throw new RangeError(`the AAC encoder only has band tables for 22.05/24 kHz, not ${audio.sampleRate}`);
  const window = sineWindow(2 * FRAME_LENGTH);
  const textChunks = splitText(spokenText);
  // One frame of priming: the decoder's first output block is the overlap before the first sample.
  const frameCount = Math.ceil(audio.samples.length / FRAME_LENGTH) + 1;
  const frames: Buffer[] = [];
  const block = new Float64Array(2 * FRAME_LENGTH);
  for (let t = 0; t < frameCount; t++) {
    const start = (t - 1) * FRAME_LENGTH;
    for (let i = 0; i < block.length; i++) {
      const index = start + i;
      const sample = index >= 0 && index < audio.samples.length ? audio.samples[index] : 0;
      block[i] = sample * window[i];
    }
    const spectrum = mdct(block);
    frames.push(adtsFrame(rawDataBlock(spectrum, textChunks[t]), frequencyIndex));
  }
  return Buffer.concat(frames);
}

function rawDataBlock(spectrum: Float64Array, textChunk: Buffer | undefined): Buffer {
  let scalefactor = chooseScalefactor(spectrum);
  for (;;) {
    const out = new BitWriter(1024);
    if (textChunk) writeDataStreamElement(out, textChunk);
    out.writeBits(ID_SCE, 3);
    out.writeBits(0, 4); // element_instance_tag
    writeChannelStream(out, spectrum, scalefactor);
    out.writeBits(ID_END, 3);
    out.alignWithZeros();
    const bytes = out.bytes();
    if (bytes.length <= MAX_FRAME_BYTES || scalefactor >= 255) return Buffer.from(bytes);
    scalefactor = Math.min(255, scalefactor + 4);
  }
}

function writeDataStreamElement(out: BitWriter, data: Buffer): void {
  out.writeBits(ID_DSE, 3);
  out.writeBits(0, 4); // element_instance_tag
  out.writeBits(1, 1); // data_byte_align_flag
  const count = Math.min(255, data.length);
  out.writeBits(count, 8);
  if (count === 255) out.writeBits(data.length - 255, 8);
  out.alignWithZeros();
  out.writeBytes(data);
}

function writeChannelStream(out: BitWriter, spectrum: Float64Array, scalefactor: number): void {
  const quantized = quantize(spectrum, scalefactor);
  const bandCount = SWB_OFFSETS_LONG_24K.length - 1;
  const bandHasEnergy: boolean[] = [];
  for (let band = 0; band < bandCount; band++) {
    let any = false;
    for (let k = SWB_OFFSETS_LONG_24K[band]; k < SWB_OFFSETS_LONG_24K[band + 1]; k++) if (quantized[k] !== 0) { any = true; break; }
    bandHasEnergy.push(any);
  }
  const maxSfb = bandHasEnergy.lastIndexOf(true) + 1;
  out.writeBits(scalefactor, 8); // global_gain
  // ics_info: reserved, ONLY_LONG_SEQUENCE, sine window, max_sfb, no prediction.
  out.writeBits(0, 1);
  out.writeBits(0, 2);
  out.writeBits(0, 1);
  out.writeBits(maxSfb, 6);
  out.writeBits(0, 1);
  // section_data: runs of bands sharing a codebook (0 = ZERO_HCB, 7 = our spectrum codebook).
  const sections: Array<{ codebook: number; start: number; length: number }> = [];
  for (let band = 0; band < maxSfb; band++) {
    const codebook = bandHasEnergy[band] ? 7 : 0;
    const last = sections[sections.length - 1];
    if (last && last.codebook === codebook) last.length++;
    else sections.push({ codebook, start: band, length: 1 });
  }
  for (const section of sections) {
    out.writeBits(section.codebook, 4);
    let remaining = section.length;
    while (remaining >= 31) {
      out.writeBits(31, 5);
      remaining -= 31;
    }
    out.writeBits(remaining, 5);
  }
  // scale_factor_data: every coded band uses the global gain, a difference of 0.
  for (let band = 0; band < maxSfb; band++) if (bandHasEnergy[band]) out.writeBits(SCALEFACTOR_ZERO_DIFF.code, SCALEFACTOR_ZERO_DIFF.bits);
  out.writeBits(0, 1); // pulse_data_present
  out.writeBits(0, 1); // tns_data_present
  out.writeBits(0, 1); // gain_control_data_present
  for (const section of sections) {
    if (section.codebook === 0) continue;
    const from = SWB_OFFSETS_LONG_24K[section.start];
    const to = SWB_OFFSETS_LONG_24K[section.start + section.length];
    for (let k = from; k < to; k += 2) {
      const y = quantized[k];
      const z = quantized[k + 1];
      const index = Math.abs(y) * 8 + Math.abs(z);
      out.writeBits(CODEBOOK_7_CODES[index], CODEBOOK_7_BITS[index]);
      if (y !== 0) out.writeBit(y < 0 ? 1 : 0);
      if (z !== 0) out.writeBit(z < 0 ? 1 : 0);
    }
  }
}

/** The smallest scalefactor that keeps every quantized line within codebook 7's range. */
function chooseScalefactor(spectrum: Float64Array): number {
  let peak = 0;
  for (const value of spectrum) peak = Math.max(peak, Math.abs(value));
  if (peak === 0) return SF_OFFSET;
  let scalefactor = Math.max(0, Math.floor(SF_OFFSET + 4 * Math.log2(peak / 14.9)));
  while (scalefactor < 255 && quantizeOne(peak, scalefactor) > MAX_QUANT) scalefactor++;
  return Math.min(255, scalefactor);
}

function quantize(spectrum: Float64Array, scalefactor: number): Int8Array {
  const out = new Int8Array(spectrum.length);
  for (let k = 0; k < spectrum.length; k++) {
    const magnitude = Math.min(MAX_QUANT, quantizeOne(Math.abs(spectrum[k]), scalefactor));
    out[k] = spectrum[k] < 0 ? -magnitude : magnitude;
  }
  return out;
}

function quantizeOne(magnitude: number, scalefactor: number): number {
  return Math.floor((magnitude * 2 ** (-(scalefactor - SF_OFFSET) / 4)) ** 0.75 + 0.4054);
}

function adtsFrame(payload: Buffer, frequencyIndex: number): Buffer {
  const header = new BitWriter(7);
  const frameLength = payload.length + 7;
  header.writeBits(0xfff, 12); // syncword
  header.writeBits(0, 1); // MPEG-4
  header.writeBits(0, 2); // layer
  header.writeBits(1, 1); // no CRC
  header.writeBits(1, 2); // profile: AAC LC (object type 2)
  header.writeBits(frequencyIndex, 4);
  header.writeBits(0, 1); // private
  header.writeBits(1, 3); // one channel
  header.writeBits(0, 4); // original/copy, home, copyright bits
  header.writeBits(frameLength, 13);
  header.writeBits(0x7ff, 11); // buffer fullness: variable rate
  header.writeBits(0, 2); // one raw data block
  return Buffer.concat([header.bytes(), payload]);
}

function sineWindow(length: number): Float64Array {
  return Float64Array.from({ length }, (_, n) => Math.sin((Math.PI * (n + 0.5)) / length));
}

function splitText(text: string | undefined): Buffer[] {
  if (!text) return [];
  const body = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const payload = Buffer.concat([TEXT_MAGIC, length, body]);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < payload.length; offset += DSE_MAX_BYTES) chunks.push(payload.subarray(offset, offset + DSE_MAX_BYTES));
  return chunks;
}

export interface AdtsInfo {
  sampleRate: number;
  channels: number;
  frames: number;
  seconds: number;
  /** Text carried in our leading data stream elements, if any. */
  text: string | null;
}

/** Walks ADTS frames (core/media-probe), collecting our text from the leading data stream elements. */
export function parseAdts(file: Buffer): AdtsInfo | null {
  const textParts: Buffer[] = [];
  let expectedText = -1;
  let collected = 0;
  let text: string | null = null;
  const adts = readAdts(file, (payload) => {
    if (expectedText === 0 || payload[0] >> 5 !== ID_DSE) return;
    const count = payload[1];
    const total = count === 255 ? 255 + payload[2] : count;
    const dataStart = count === 255 ? 3 : 2;
    const chunk = payload.subarray(dataStart, dataStart + total);
    if (expectedText < 0 && chunk.subarray(0, 4).equals(TEXT_MAGIC)) expectedText = chunk.readUInt32BE(4) + 8;
    if (expectedText > 0) {
      textParts.push(chunk);
      collected += chunk.length;
      if (collected >= expectedText) {
        text = Buffer.concat(textParts).subarray(8, expectedText).toString('utf8');
        expectedText = 0;
      }
    }
  });
  if (!adts) return null;
  const { sampleRate, channels, frames, seconds } = adts;
  return { sampleRate, channels, frames, seconds, text };
}
