import { expect } from 'chai';
import { isAudio, probeAudio, readMpegAudio, sniffImage } from '../../core/media-probe';
import { AudioFormat, encodeAudio } from '../../simulator/media/audio';
import { generateImage } from '../../simulator/media/image';
import { encodeMp3 } from '../../simulator/media/mp3';
import { writeOggStream } from '../../simulator/media/ogg';
import { samplesToBytes, synthesizeSpeech } from '../../simulator/media/synth';
import { renderVideo } from '../../simulator/media/video';

const speech = synthesizeSpeech('Time me in every container, please.', 'alloy', 1);
const seconds = speech.samples.length / speech.sampleRate;

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

function box(type: string, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([uint32(body.length + 8), Buffer.from(type, 'latin1'), body]);
}

/** An M4A-like file: ftyp, a moov with one track of the given handler, an mdat of ADTS frames. */
function mp4(handler: string, movieSeconds: number, trackSeconds: number): Buffer {
  const version0 = Buffer.alloc(4);
  const mvhd = box('mvhd', version0, uint32(0), uint32(0), uint32(1000), uint32(movieSeconds * 1000), Buffer.alloc(80));
  const mdhd = box('mdhd', version0, uint32(0), uint32(0), uint32(24_000), uint32(Math.round(trackSeconds * 24_000)), Buffer.alloc(4));
  const hdlr = box('hdlr', version0, uint32(0), Buffer.from(handler, 'latin1'), Buffer.alloc(12), Buffer.from('Handler\0'));
  return Buffer.concat([
    box('ftyp', Buffer.from('M4A '), uint32(0), Buffer.from('M4A isomiso2')),
    box('moov', mvhd, box('trak', box('mdia', mdhd, hdlr))),
    box('mdat', encodeAudio('aac', speech)),
  ]);
}

/** An EBML element: the id as written (marker included), then an 8-byte size (or "unknown"). */
function ebml(id: number, ...content: Array<Buffer | string>): Buffer {
  return ebmlSized(id, false, ...content);
}

function ebmlSized(id: number, unknownSize: boolean, ...content: Array<Buffer | string>): Buffer {
  const body = Buffer.concat(content.map((c) => (typeof c === 'string' ? Buffer.from(c, 'latin1') : c)));
  const idBytes = Buffer.from(id.toString(16).padStart(id > 0xffffff ? 8 : id > 0xffff ? 6 : id > 0xff ? 4 : 2, '0'), 'hex');
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(unknownSize ? 0x01ffffffffffffffn : 0x0100000000000000n | BigInt(body.length));
  return Buffer.concat([idBytes, size, body]);
}

function ebmlUint(id: number, value: number): Buffer {
  const body = Buffer.alloc(4);
  body.writeUInt32BE(value);
  return ebml(id, body);
}

function simpleBlock(relativeMs: number): Buffer {
  const body = Buffer.alloc(4 + 20);
  body[0] = 0x81; // track 1
  body.writeInt16BE(relativeMs, 1);
  return ebml(0xa3, body);
}

/** A WebM file with one track of `trackType` (2 audio, 1 video), clusters at 0 and 2 s, and maybe a Duration. */
function webm(trackType: number, durationMs: number | null): Buffer {
  const info = [ebmlUint(0x2ad7b1, 1_000_000)];
  if (durationMs !== null) {
    const duration = Buffer.alloc(8);
    duration.writeDoubleBE(durationMs);
    info.push(ebml(0x4489, duration));
  }
  return Buffer.concat([
    ebml(0x1a45dfa3, ebml(0x4282, 'webm')),
    ebmlSized(0x18538067, true,
      ebml(0x1549a966, ...info),
      ebml(0x1654ae6b, ebml(0xae, ebmlUint(0xd7, 1), ebmlUint(0x83, trackType))),
      ebmlSized(0x1f43b675, true, ebmlUint(0xe7, 0), simpleBlock(0), simpleBlock(1000)),
      ebmlSized(0x1f43b675, true, ebmlUint(0xe7, 2000), simpleBlock(480))),
  ]);
}

/** An Ogg stream whose first packet is `head`, then one audio packet ending at `granule`. */
function ogg(head: Buffer, granule: bigint): Buffer {
  return writeOggStream(7, [[{ data: head, granule: 0n }], [{ data: Buffer.from('\x03vorbis comments'), granule: 0n }], [{ data: Buffer.alloc(300, 1), granule }]]);
}

function vorbisHead(sampleRate: number): Buffer {
  const head = Buffer.alloc(30);
  head.write('\x01vorbis', 0, 'latin1');
  head[11] = 1;
  head.writeUInt32LE(sampleRate, 12);
  return head;
}

/** MPEG-1 frames at 44.1 kHz, 128 kbit/s, mono: layer III (417 bytes) or II (417 bytes), silent bodies. */
function mpegFrames(count: number, layer: 2 | 3): Buffer[] {
  return Array.from({ length: count }, () => {
    const frame = Buffer.alloc(417);
    frame.writeUInt32BE(layer === 3 ? 0xfffb90c0 : 0xfffd80c0);
    return frame;
  });
}

describe('core media probe', () => {
  const tolerance: Record<string, number> = { wav: 1e-9, flac: 1e-9, opus: 1e-9, aac: 0.1, mp3: 0.15 };

  for (const format of ['wav', 'flac', 'opus', 'aac', 'mp3'] as AudioFormat[]) {
    it(`reads ${format}: the container and its duration`, () => {
      const file = encodeAudio(format, speech, { title: 'Probe', text: 'spoken' });
      const probe = probeAudio(file);
      expect(probe.format).to.equal(format);
      expect(probe.seconds).to.be.closeTo(seconds, tolerance[format]);
      expect(isAudio(file)).to.equal(true);
    });
  }

  // LAME resamples when the bitrate is low for the rate, hence a bitrate to each.
  for (const [sampleRate, version, kbps] of [[44_100, 1, 128], [24_000, 2, 64], [11_025, 2.5, 32], [8_000, 2.5, 32]]) {
    it(`walks MPEG-${version} layer III frames (${sampleRate} Hz)`, () => {
      const audio = { samples: speech.samples, sampleRate };
      const file = encodeMp3(audio, {}, kbps);
      expect(readMpegAudio(file)).to.include({ version, layer: 3, sampleRate });
      const probe = probeAudio(file);
      expect(probe.format).to.equal('mp3');
      // lamejs adds its encoder delay and pads the last frame: at most about two frames more.
      const frameSeconds = (version === 1 ? 1152 : 576) / sampleRate;
      expect(probe.seconds).to.be.within(audio.samples.length / sampleRate, audio.samples.length / sampleRate + 3 * frameSeconds);
    });
  }

  it('walks MPEG-1 layer II frames, and believes a Xing header\'s frame count', () => {
    expect(probeAudio(Buffer.concat(mpegFrames(5, 2)))).to.deep.equal({ format: 'mp3', seconds: (5 * 1152) / 44_100 });
    const frames = mpegFrames(10, 3);
    frames[0].write('Xing', 4 + 17, 'latin1');
    frames[0].writeUInt32BE(1, 4 + 17 + 4);
    frames[0].writeUInt32BE(100, 4 + 17 + 8);
    expect(probeAudio(Buffer.concat(frames)).seconds).to.be.closeTo((100 * 1152) / 44_100, 1e-9);
  });

  it('does not take a stray frame sync for MP3', () => {
    const stray = Buffer.concat([mpegFrames(1, 3)[0], Buffer.from('and then some text that is not a frame')]);
    expect(probeAudio(stray).format).to.equal('unknown');
    expect(isAudio(Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 2, 0, 0]), Buffer.from('plain text after a tag')]))).to.equal(false);
  });

  it('reads Ogg Vorbis as ogg, from its last granule position, and passes over a Theora-only stream', () => {
    expect(probeAudio(ogg(vorbisHead(44_100), 88_200n))).to.deep.equal({ format: 'ogg', seconds: 2 });
    const theora = Buffer.concat([Buffer.from('\x80theora', 'latin1'), Buffer.alloc(40)]);
    expect(isAudio(ogg(theora, 100n))).to.equal(false);
  });

  it('reads M4A: the movie duration, else the sound track\'s; a video without sound is not audio', () => {
    expect(probeAudio(mp4('soun', 3, 3))).to.deep.equal({ format: 'm4a', seconds: 3 });
    expect(probeAudio(mp4('soun', 0, 2.5))).to.deep.equal({ format: 'm4a', seconds: 2.5 });
    expect(isAudio(mp4('vide', 3, 3))).to.equal(false);
    expect(isAudio(renderVideo({ width: 64, height: 64, fps: 8, seconds: 1, seed: 3 }).data)).to.equal(false);
    const avif = box('ftyp', Buffer.from('avif'), uint32(0), Buffer.from('avifmif1miaf'));
    expect(isAudio(Buffer.concat([avif, box('meta', Buffer.alloc(40))]))).to.equal(false);
  });

  it('reads WebM: the Duration, else the last block\'s timestamp; no audio track, no audio', () => {
    expect(probeAudio(webm(2, 2500))).to.deep.equal({ format: 'webm', seconds: 2.5 });
    expect(probeAudio(webm(2, null))).to.deep.equal({ format: 'webm', seconds: 2.48 });
    expect(isAudio(webm(1, 2500))).to.equal(false);
  });

  it('takes raw bytes for 24 kHz 16-bit mono PCM only when hinted', () => {
    const pcm = samplesToBytes(speech.samples);
    expect(probeAudio(pcm, { mediaType: 'audio/pcm' })).to.deep.equal({ format: 'pcm', seconds });
    expect(probeAudio(pcm, { filename: 'clip.RAW' }).format).to.equal('pcm');
    expect(isAudio(pcm, { filename: 'clip.pcm' })).to.equal(true);
    expect(probeAudio(pcm).format).to.equal('unknown');
    expect(isAudio(pcm)).to.equal(false);
  });

  it('refuses images and text, even when they are called pcm', async () => {
    const png = await generateImage({ width: 32, height: 32, seed: 1, format: 'png' });
    const jpeg = await generateImage({ width: 32, height: 32, seed: 1, format: 'jpeg' });
    const text = Buffer.from('Dear transcription model,\nthis is a letter, not a recording.\n');
    for (const file of [png, jpeg, text]) {
      expect(isAudio(file)).to.equal(false);
      expect(isAudio(file, { filename: 'notes.txt', mediaType: 'text/plain' })).to.equal(false);
    }
    expect(isAudio(png, { mediaType: 'audio/pcm' })).to.equal(false);
    expect(probeAudio(text)).to.deep.equal({ format: 'unknown', seconds: text.length / 16_000 });
  });

  it('sniffs images by their magic bytes', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      expect(sniffImage(await generateImage({ width: 16, height: 16, seed: 2, format }))).to.equal(`image/${format}`);
    }
    expect(sniffImage(Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'))).to.equal('image/gif');
    expect(sniffImage(encodeAudio('wav', speech))).to.equal(null);
    expect(sniffImage(Buffer.from('plain text'))).to.equal(null);
  });
});
