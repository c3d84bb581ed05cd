import { expect } from 'chai';
import OpusScript from 'opusscript';
import { readOggPackets, readOggPages } from '../../../simulator/media/ogg';
import { encodeOggOpus, parseOggOpus } from '../../../simulator/media/opus';
import { synthesizeSpeech } from '../../../simulator/media/synth';

describe('simulated media: Ogg Opus', () => {
  const text = 'Opus in Ogg, with the words in OpusTags.';
  const audio = synthesizeSpeech(text, 'shimmer', 1);
  const file = encodeOggOpus(audio, { title: 'Opus', text, software: 'tests' });
  const pages = readOggPages(file);
  const packets = readOggPackets(pages);

  it('is a chain of Ogg pages with valid checksums, BOS first and EOS last', () => {
    expect(file.toString('latin1', 0, 4)).to.equal('OggS');
    expect(pages.reduce((n, p) => n + 27 + p.segments.length + p.body.length, 0)).to.equal(file.length);
    expect(pages.every((p) => p.checksumOk)).to.equal(true);
    expect(pages.map((p) => p.sequence)).to.deep.equal(pages.map((_, i) => i));
    expect(pages[0].flags & 0x02).to.equal(0x02);
    expect(pages[pages.length - 1].flags & 0x04).to.equal(0x04);
  });

  it('opens with OpusHead (mono, 24 kHz input, pre-skip) and OpusTags carrying the text', () => {
    expect(packets[0].toString('latin1', 0, 8)).to.equal('OpusHead');
    expect(packets[0][9]).to.equal(1);
    expect(packets[0].readUInt32LE(12)).to.equal(24000);
    expect(packets[1].toString('latin1', 0, 8)).to.equal('OpusTags');
    const info = parseOggOpus(file)!;
    expect(info.comments).to.deep.equal({ TITLE: 'Opus', LYRICS: text, ENCODER: 'tests' });
    expect(info.seconds).to.be.closeTo(audio.samples.length / 24000, 1e-9);
  });

  it('holds Opus packets that a decoder turns back into the tone', () => {
    const decoder = new OpusScript(48000, 1);
    let peak = 0;
    let decodedSamples = 0;
    try {
      for (const packet of packets.slice(2)) {
        const pcm = decoder.decode(packet);
        decodedSamples += pcm.length / 2;
        for (let i = 0; i < pcm.length; i += 2) peak = Math.max(peak, Math.abs(pcm.readInt16LE(i)));
      }
    } finally {
      decoder.delete();
    }
    expect(decodedSamples).to.be.at.least(audio.samples.length * 2 + 312);
    expect(peak).to.be.greaterThan(3000);
  });

  it('is deterministic', () => {
    expect(encodeOggOpus(synthesizeSpeech(text, 'shimmer', 1), { title: 'Opus', text, software: 'tests' }).equals(file)).to.equal(true);
  });
});
