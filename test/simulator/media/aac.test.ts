import { expect } from 'chai';
import { CODEBOOK_7_BITS, CODEBOOK_7_CODES, SWB_OFFSETS_LONG_24K } from '../../../simulator/media/aac-tables';
import { encodeAdtsAac, parseAdts } from '../../../simulator/media/aac';
import { BitReader } from '../../../simulator/media/bit-writer';
import { synthesizeSpeech } from '../../../simulator/media/synth';

/** Parses one raw data block of the subset we write; returns the number of non-zero spectral lines. */
function parseRawDataBlock(frame: Buffer): number {
  const r = new BitReader(frame, 7);
  let lines = 0;
  for (;;) {
    const id = r.readBits(3);
    if (id === 7) break; // END
    if (id === 4) { // DSE
      r.readBits(4);
      const align = r.readBits(1);
      let count = r.readBits(8);
      if (count === 255) count += r.readBits(8);
      if (align) while (r.bitPosition % 8 !== 0) r.readBit();
      r.readBits(8 * count);
      continue;
    }
    expect(id).to.equal(0); // SCE
    r.readBits(4);
    r.readBits(8); // global_gain
    expect(r.readBits(1)).to.equal(0);
    expect(r.readBits(2)).to.equal(0); // ONLY_LONG_SEQUENCE
    r.readBits(1);
    const maxSfb = r.readBits(6);
    expect(r.readBits(1)).to.equal(0);
    const codebooks: number[] = [];
    while (codebooks.length < maxSfb) {
      const cb = r.readBits(4);
      expect([0, 7]).to.include(cb);
      let length = 0;
      let increment: number;
      do { increment = r.readBits(5); length += increment; } while (increment === 31);
      for (let i = 0; i < length; i++) codebooks.push(cb);
    }
    expect(codebooks.length).to.equal(maxSfb);
    for (const cb of codebooks) if (cb !== 0) expect(r.readBits(1)).to.equal(0); // scalefactor difference 0
    expect(r.readBits(3)).to.equal(0); // no pulse, TNS or gain control
    for (let band = 0; band < maxSfb; band++) {
      if (codebooks[band] === 0) continue;
      for (let k = SWB_OFFSETS_LONG_24K[band]; k < SWB_OFFSETS_LONG_24K[band + 1]; k += 2) {
        let code = 0;
        let length = 0;
        let index = -1;
        while (index < 0) {
          code = code * 2 + r.readBit();
          length++;
          expect(length).to.be.at.most(12);
          index = CODEBOOK_7_CODES.findIndex((c, i) => c === code && CODEBOOK_7_BITS[i] === length);
        }
        const y = Math.floor(index / 8);
        const z = index % 8;
        if (y) { r.readBit(); lines++; }
        if (z) { r.readBit(); lines++; }
      }
    }
  }
  while (r.bitPosition % 8 !== 0) expect(r.readBit()).to.equal(0);
  expect(r.bitPosition / 8).to.equal(frame.length);
  return lines;
}

describe('simulated media: AAC (ADTS)', () => {
  const text = 'AAC frames carry this sentence in data stream elements.';
  const audio = synthesizeSpeech(text, 'onyx', 1);
  const file = encodeAdtsAac(audio, text);

  it('is a chain of ADTS frames: sync word, AAC LC, 24 kHz, mono, lengths adding up to the file', () => {
    let offset = 0;
    let frames = 0;
    while (offset < file.length) {
      const r = new BitReader(file, offset);
      expect(r.readBits(12)).to.equal(0xfff);
      r.readBits(3);
      expect(r.readBits(1)).to.equal(1); // no CRC
      expect(r.readBits(2)).to.equal(1); // AAC LC
      expect(r.readBits(4)).to.equal(6); // 24 kHz
      r.readBits(1);
      expect(r.readBits(3)).to.equal(1); // mono
      r.readBits(4);
      offset += r.readBits(13);
      frames++;
    }
    expect(offset).to.equal(file.length);
    // One frame per 1024 samples plus the decoder's priming frame.
    expect(frames).to.equal(Math.ceil(audio.samples.length / 1024) + 1);
  });

  it('has raw data blocks that parse to the end, with spectral lines where the tone is', () => {
    let offset = 0;
    let lines = 0;
    while (offset < file.length) {
      const length = (file.readUInt32BE(offset + 2) >>> 5) & 0x1fff;
      lines += parseRawDataBlock(file.subarray(offset, offset + length));
      offset += length;
    }
    expect(lines).to.be.greaterThan(100);
  });

  it('gives back the text and the duration', () => {
    const info = parseAdts(file)!;
    expect(info.text).to.equal(text);
    expect(info.sampleRate).to.equal(24000);
    expect(info.seconds).to.be.closeTo(audio.samples.length / 24000, 0.1);
  });

  it('carries long texts over several frames', () => {
    const long = 'word '.repeat(400).trim();
    expect(parseAdts(encodeAdtsAac(synthesizeSpeech(long, 'onyx', 4), long))!.text).to.equal(long);
  });

  it('is deterministic', () => {
    expect(encodeAdtsAac(synthesizeSpeech(text, 'onyx', 1), text).equals(file)).to.equal(true);
  });
});
