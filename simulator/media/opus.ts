/**
 * Ogg Opus (RFC 7845): libopus (compiled to WebAssembly, from the `opusscript` package) encodes 20 ms
 * frames; the OpusHead and OpusTags headers and the Ogg pages are written here.
 */
import OpusScript from 'opusscript';
import { readOggAudio } from '../../core/media-probe';
import { writeOggStream, OggPacket, readOggPages, readOggPackets } from './ogg';
import { AudioTags, PcmAudio } from './synth';
import { encodeVorbisComments, parseVorbisComments, tagsToComments } from './vorbis-comment';

/** libopus' encoder delay at 48 kHz (2.5 ms look-ahead + 4 ms delay compensation). */
const PRE_SKIP = 312;
const FRAME_MS = 20;
const PACKETS_PER_PAGE = 50;

export function encodeOggOpus(audio: PcmAudio, tags: AudioTags = {}, serial = 0x53494d55): Buffer {
  const rate = audio.sampleRate as 8000 | 12000 | 16000 | 24000 | 48000;
  if (![8000, 12000, 16000, 24000, 48000].includes(rate)) throw new RangeError(`Opus cannot encode ${audio.sampleRate} Hz`);
  const encoder = new OpusScript(rate, 1, OpusScript.Application.AUDIO);
  const frameSize = (rate * FRAME_MS) / 1000;
  const samplesPer48k = 48000 / rate;
  const audioPackets: OggPacket[] = [];
  try {
    encoder.setBitrate(32_000);
    const frame = Buffer.alloc(frameSize * 2);
    // Keep encoding past the end until the encoder's look-ahead has been flushed out too.
    const preSkipAtRate = Math.ceil(PRE_SKIP / samplesPer48k);
    for (let start = 0; start < audio.samples.length + preSkipAtRate; start += frameSize) {
      frame.fill(0);
      const chunk = audio.samples.subarray(start, start + frameSize);
      for (let i = 0; i < chunk.length; i++) frame.writeInt16LE(chunk[i], i * 2);
      audioPackets.push({ data: Buffer.from(encoder.encode(frame, frameSize)), granule: 0n });
    }
  } finally {
    encoder.delete();
  }
  // Granules count decoded samples including the pre-skip; the last one trims the padding off the end.
  for (let i = 0; i < audioPackets.length; i++) audioPackets[i].granule = BigInt((i + 1) * frameSize * samplesPer48k);
  audioPackets[audioPackets.length - 1].granule = BigInt(PRE_SKIP + audio.samples.length * samplesPer48k);
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(PRE_SKIP, 10);
  head.writeUInt32LE(audio.sampleRate, 12);
  head.writeInt16LE(0, 16);
  head[18] = 0; // mapping family 0: mono/stereo
  const opusTags = Buffer.concat([Buffer.from('OpusTags', 'latin1'), encodeVorbisComments(tagsToComments(tags))]);
  const groups: OggPacket[][] = [[{ data: head, granule: 0n }], [{ data: opusTags, granule: 0n }]];
  for (let i = 0; i < audioPackets.length; i += PACKETS_PER_PAGE) groups.push(audioPackets.slice(i, i + PACKETS_PER_PAGE));
  return writeOggStream(serial, groups);
}

export interface OggOpusInfo {
  channels: number;
  preSkip: number;
  inputSampleRate: number;
  seconds: number;
  comments: Record<string, string>;
}

/** Reads OpusHead and the final granule (core/media-probe) and OpusTags; null when the bytes are not Ogg Opus. */
export function parseOggOpus(file: Buffer): OggOpusInfo | null {
  const opus = readOggAudio(file);
  if (!opus || opus.codec !== 'opus') return null;
  const [head, tagsPacket] = readOggPackets(readOggPages(file).filter((page) => page.serial === opus.serial));
  const comments = tagsPacket && tagsPacket.toString('latin1', 0, 8) === 'OpusTags' ? parseVorbisComments(tagsPacket.subarray(8))?.comments ?? {} : {};
  return { channels: opus.channels, preSkip: opus.preSkip, inputSampleRate: head.readUInt32LE(12), seconds: opus.seconds, comments };
}
