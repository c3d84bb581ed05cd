/**
 * MP3 through lamejs (a pure-JS port of LAME), with an ID3v2.4 tag in front carrying the spoken text.
 * The package ships an ES module next to a browser IIFE; Node loads the module by its file path.
 */
import path from 'node:path';
import { encodeId3, parseId3 } from './id3';
import { AudioTags, PcmAudio } from './synth';

interface LameModule {
  Mp3Encoder: new (channels: number, sampleRate: number, kbps: number) => {
    encodeBuffer(left: Int16Array): Uint8Array;
    flush(): Uint8Array;
  };
}

let lame: LameModule | undefined;

function loadLame(): LameModule {
  if (!lame) {
    const entry = require.resolve('@breezystack/lamejs');
    lame = require(path.join(path.dirname(entry), 'lamejs.js')) as LameModule;
  }
  return lame;
}

/** Mono MP3 at the clip's sample rate; LAME accepts 8..48 kHz and picks MPEG-1/2/2.5 itself. */
export function encodeMp3(audio: PcmAudio, tags: AudioTags = {}, kbps = 64): Buffer {
  const { Mp3Encoder } = loadLame();
  const encoder = new Mp3Encoder(1, audio.sampleRate, kbps);
  const parts: Buffer[] = [encodeId3(tags)];
  const blockSize = 1152 * 16;
  for (let offset = 0; offset < audio.samples.length; offset += blockSize) {
    const frames = encoder.encodeBuffer(audio.samples.subarray(offset, offset + blockSize));
    if (frames.length > 0) parts.push(Buffer.from(frames));
  }
  const tail = encoder.flush();
  if (tail.length > 0) parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

export interface Mp3Info {
  sampleRate: number;
  channels: number;
  frames: number;
  seconds: number;
  /** The ID3v2 tag's frames (TIT2, USLT, ...), when there is one. */
  tags: Record<string, string>;
  /** Offset of the first audio frame, and just past the last one. */
  firstFrameOffset: number;
  endOffset: number;
}

const LAYER3_BITRATES = {
  mpeg1: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  mpeg2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

/** Walks MPEG audio Layer III frames after an optional ID3v2 tag; null when no frame sync is found there. */
export function parseMp3(file: Buffer): Mp3Info | null {
  const tag = parseId3(file);
  let offset = tag?.size ?? 0;
  const info: Mp3Info = { sampleRate: 0, channels: 0, frames: 0, seconds: 0, tags: tag?.frames ?? {}, firstFrameOffset: offset, endOffset: offset };
  let samples = 0;
  while (offset + 4 <= file.length) {
    const header = file.readUInt32BE(offset);
    if ((header >>> 21) !== 0x7ff) break;
    const version = (header >>> 19) & 3;
    const layer = (header >>> 17) & 3;
    const bitrateIndex = (header >>> 12) & 15;
    const rateIndex = (header >>> 10) & 3;
    const padding = (header >>> 9) & 1;
    if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) break;
    const sampleRate = SAMPLE_RATES[version][rateIndex];
    const bitrate = (version === 3 ? LAYER3_BITRATES.mpeg1 : LAYER3_BITRATES.mpeg2)[bitrateIndex] * 1000;
    const samplesPerFrame = version === 3 ? 1152 : 576;
    const length = Math.floor((samplesPerFrame / 8) * bitrate / sampleRate) + padding;
    info.sampleRate = sampleRate;
    info.channels = ((header >>> 6) & 3) === 3 ? 1 : 2;
    info.frames++;
    samples += samplesPerFrame;
    offset += length;
  }
  if (info.frames === 0) return null;
  info.endOffset = Math.min(offset, file.length);
  info.seconds = samples / info.sampleRate;
  return info;
}
