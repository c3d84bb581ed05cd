/**
 * MP3 through lamejs (a pure-JS port of LAME), with an ID3v2.4 tag in front carrying the spoken text.
 * The package ships an ES module next to a browser IIFE; Node loads the module by its file path.
 */
import path from 'node:path';
import { readMpegAudio } from '../../core/media-probe';
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

/** Walks the MPEG audio frames after an optional ID3v2 tag (core/media-probe); null when there are none. */
export function parseMp3(file: Buffer): Mp3Info | null {
  const mpeg = readMpegAudio(file);
  if (!mpeg) return null;
  const { sampleRate, channels, frames, seconds, firstFrameOffset, endOffset } = mpeg;
  return { sampleRate, channels, frames, seconds, tags: parseId3(file)?.frames ?? {}, firstFrameOffset, endOffset };
}
