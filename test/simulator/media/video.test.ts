import { expect } from 'chai';
import { BitReader } from '../../../simulator/media/bit-writer';
import { readBoxes } from '../../../simulator/media/mp4';
import { renderVideo } from '../../../simulator/media/video';

function child(data: Buffer, path: string[], start = 0, end = data.length) {
  let box = readBoxes(data, start, end).find((b) => b.type === path[0]);
  for (const type of path.slice(1)) {
    if (!box) return undefined;
    // stsd and dref have a 4-byte count (plus version/flags) before their children; avc1 has 78 bytes of fields.
    const skip = box.type === 'stsd' || box.type === 'dref' ? 8 : box.type === 'avc1' ? 78 : 0;
    box = readBoxes(data, box.bodyStart + skip, box.start + box.size).find((b) => b.type === type);
  }
  return box;
}

/** Removes emulation prevention bytes from a NAL payload. */
function unescape(nal: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < nal.length; i++) {
    if (i >= 2 && nal[i] === 3 && nal[i - 1] === 0 && nal[i - 2] === 0) continue;
    out.push(nal[i]);
  }
  return Buffer.from(out);
}

describe('simulated media: video (H.264 in MP4)', () => {
  const video = renderVideo({ width: 320, height: 180, fps: 8, seconds: 2, seed: 11 });
  const mp4 = video.data;

  it('is ftyp, moov, mdat at the top level, sizes covering the file', () => {
    const top = readBoxes(mp4);
    expect(top.map((b) => b.type)).to.deep.equal(['ftyp', 'moov', 'mdat']);
    expect(top.reduce((sum, b) => sum + b.size, 0)).to.equal(mp4.length);
    expect(mp4.toString('latin1', 8, 12)).to.equal('isom');
  });

  it('declares the duration and the picture size', () => {
    const mvhd = child(mp4, ['moov', 'mvhd'])!;
    const timescale = mp4.readUInt32BE(mvhd.bodyStart + 12);
    expect(mp4.readUInt32BE(mvhd.bodyStart + 16) / timescale).to.equal(2);
    const tkhd = child(mp4, ['moov', 'trak', 'tkhd'])!;
    expect(mp4.readUInt32BE(tkhd.bodyStart + 76) / 65536).to.equal(320);
    expect(mp4.readUInt32BE(tkhd.bodyStart + 80) / 65536).to.equal(180);
    const avc1 = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd', 'avc1'])!;
    expect([mp4.readUInt16BE(avc1.bodyStart + 24), mp4.readUInt16BE(avc1.bodyStart + 26)]).to.deep.equal([320, 180]);
    expect(video.frames).to.equal(16);
    const stsz = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz'])!;
    expect(mp4.readUInt32BE(stsz.bodyStart + 8)).to.equal(16);
  });

  it('carries an avcC whose SPS is Constrained Baseline with the right coded and cropped size', () => {
    const avcC = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd', 'avc1', 'avcC'])!;
    const body = mp4.subarray(avcC.bodyStart, avcC.start + avcC.size);
    expect(body[0]).to.equal(1);
    expect(body[1]).to.equal(66); // Baseline
    expect(body[2] & 0x40).to.equal(0x40); // constraint_set1: constrained
    expect(body[5] & 0x1f).to.equal(1);
    const spsLength = body.readUInt16BE(6);
    const sps = unescape(body.subarray(8, 8 + spsLength));
    expect(sps[0] & 0x1f).to.equal(7);
    const r = new BitReader(sps, 4);
    r.readUe(); // sps id
    r.readUe(); // log2_max_frame_num_minus4
    expect(r.readUe()).to.equal(2); // poc type
    r.readUe(); // ref frames
    r.readBit();
    const width = (r.readUe() + 1) * 16;
    const height = (r.readUe() + 1) * 16;
    expect(r.readBit()).to.equal(1); // frame_mbs_only
    r.readBit();
    expect(r.readBit()).to.equal(1); // cropping
    const [left, right, top, bottom] = [r.readUe(), r.readUe(), r.readUe(), r.readUe()];
    expect([width - 2 * (left + right), height - 2 * (top + bottom)]).to.deep.equal([320, 180]);
    const ppsCount = body[8 + spsLength];
    expect(ppsCount).to.equal(1);
  });

  it('stores length-prefixed samples: an IDR picture first, then P pictures', () => {
    const stsz = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz'])!;
    const stco = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stco'])!;
    let offset = mp4.readUInt32BE(stco.bodyStart + 8);
    const types: number[] = [];
    for (let i = 0; i < 16; i++) {
      const size = mp4.readUInt32BE(stsz.bodyStart + 12 + 4 * i);
      const nalLength = mp4.readUInt32BE(offset);
      expect(nalLength + 4).to.equal(size);
      types.push(mp4[offset + 4] & 0x1f);
      offset += size;
    }
    expect(types[0]).to.equal(5);
    expect(types.slice(1).every((t) => t === 1)).to.equal(true);
    const stss = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stss'])!;
    expect(mp4.readUInt32BE(stss.bodyStart + 4)).to.equal(1);
    expect(mp4.readUInt32BE(stss.bodyStart + 8)).to.equal(1);
  });

  it('keeps P pictures small by skipping what did not move', () => {
    const stsz = child(mp4, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsz'])!;
    const first = mp4.readUInt32BE(stsz.bodyStart + 12);
    const second = mp4.readUInt32BE(stsz.bodyStart + 16);
    expect(second).to.be.lessThan(first / 3);
  });

  it('is deterministic, and differs by seed', () => {
    expect(renderVideo({ width: 320, height: 180, fps: 8, seconds: 2, seed: 11 }).data.equals(mp4)).to.equal(true);
    expect(renderVideo({ width: 320, height: 180, fps: 8, seconds: 2, seed: 12 }).data.equals(mp4)).to.equal(false);
  });
});
