import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { BitReader } from '../../../simulator/media/bit-writer';
import { crc16, crc8 } from '../../../simulator/media/checksums';
import { encodeFlac, parseFlac } from '../../../simulator/media/flac';
import { embedTextInSamples, synthesizeSpeech } from '../../../simulator/media/synth';

/** Decodes the subset our encoder writes (mono, 16-bit, CONSTANT/VERBATIM/FIXED, Rice), checking both CRCs. */
function decodeFrames(file: Buffer, firstFrame: number): Int16Array {
  const samples: number[] = [];
  let offset = firstFrame;
  while (offset < file.length) {
    const r = new BitReader(file, offset);
    expect(r.readBits(14)).to.equal(0b11111111111110);
    r.readBits(2);
    const blockCode = r.readBits(4);
    const rateCode = r.readBits(4);
    expect(r.readBits(4)).to.equal(0); // mono
    expect(r.readBits(3)).to.equal(0b100); // 16 bits
    r.readBits(1);
    let lead = r.readBits(8);
    let extra = 0;
    while (lead & 0x80) { extra++; lead = (lead << 1) & 0xff; }
    for (let i = 1; i < extra; i++) r.readBits(8);
    const blockSize = blockCode === 12 ? 4096 : blockCode === 7 ? r.readBits(16) + 1 : NaN;
    if (rateCode === 13) r.readBits(16);
    const headerEnd = r.bitPosition / 8;
    expect(r.readBits(8)).to.equal(crc8(file.subarray(offset, headerEnd)));
    r.readBits(1);
    const type = r.readBits(6);
    r.readBits(1);
    const block: number[] = [];
    const signed = (v: number) => (v >= 0x8000 ? v - 0x10000 : v);
    if (type === 0) {
      const value = signed(r.readBits(16));
      for (let i = 0; i < blockSize; i++) block.push(value);
    } else if (type === 1) {
      for (let i = 0; i < blockSize; i++) block.push(signed(r.readBits(16)));
    } else {
      const order = type & 7;
      expect(type >> 3).to.equal(1);
      for (let i = 0; i < order; i++) block.push(signed(r.readBits(16)));
      expect(r.readBits(2)).to.equal(0);
      expect(r.readBits(4)).to.equal(0);
      const k = r.readBits(4);
      for (let i = order; i < blockSize; i++) {
        let q = 0;
        while (r.readBit() === 0) q++;
        const folded = q * 2 ** k + r.readBits(k);
        const residual = folded % 2 === 0 ? folded / 2 : -(folded + 1) / 2;
        block.push(residual + 2 * block[i - 1] - block[i - 2]);
      }
    }
    while (r.bitPosition % 8 !== 0) expect(r.readBit()).to.equal(0);
    const end = r.bitPosition / 8;
    expect(r.readBits(16)).to.equal(crc16(file.subarray(offset, end)));
    samples.push(...block);
    offset = end + 2;
  }
  return Int16Array.from(samples);
}

describe('simulated media: FLAC', () => {
  const text = 'A lossless sentence for the FLAC encoder to keep bit for bit.';
  const audio = synthesizeSpeech(text, 'fable', 1);
  embedTextInSamples(audio.samples, text);
  const file = encodeFlac(audio, { title: 'FLAC', text, software: 'tests' });

  it('starts with fLaC and a STREAMINFO block describing the stream', () => {
    expect(file.toString('latin1', 0, 4)).to.equal('fLaC');
    expect(file[4] & 0x7f).to.equal(0); // STREAMINFO first
    expect(file.readUIntBE(5, 3)).to.equal(34);
    const info = parseFlac(file)!;
    expect(info).to.include({ sampleRate: 24000, channels: 1, bitsPerSample: 16, totalSamples: audio.samples.length });
    const md5 = file.subarray(8 + 18, 8 + 34);
    expect(md5.equals(createHash('md5').update(Buffer.from(audio.samples.buffer)).digest())).to.equal(true);
  });

  it('carries the text as Vorbis comments', () => {
    expect(parseFlac(file)!.comments).to.deep.equal({ TITLE: 'FLAC', LYRICS: text, ENCODER: 'tests' });
  });

  it('decodes back to exactly the input samples, every frame CRC intact', () => {
    const firstFrame = 8 + 34 + 4 + file.readUIntBE(8 + 34 + 1, 3);
    expect(Buffer.from(decodeFrames(file, firstFrame).buffer).equals(Buffer.from(audio.samples.buffer))).to.equal(true);
  });

  it('uses a CONSTANT subframe for silence', () => {
    const silent = encodeFlac({ samples: new Int16Array(5000), sampleRate: 24000 });
    const firstFrame = 8 + 34 + 4 + silent.readUIntBE(8 + 34 + 1, 3);
    expect(Array.from(decodeFrames(silent, firstFrame)).every((s) => s === 0)).to.equal(true);
    expect(silent.length).to.be.lessThan(200);
  });
});
