import { expect } from 'chai';
import { encodeWav, parseWav } from '../../../simulator/media/wav';
import { synthesizeSpeech } from '../../../simulator/media/synth';

describe('simulated media: WAV', () => {
  const audio = synthesizeSpeech('Hello from the wave file', 'alloy', 1);
  const file = encodeWav(audio, { title: 'Hello', text: 'Hello from the wave file', software: 'tests' });

  it('is a RIFF/WAVE file whose chunk sizes add up', () => {
    expect(file.toString('latin1', 0, 4)).to.equal('RIFF');
    expect(file.readUInt32LE(4)).to.equal(file.length - 8);
    expect(file.toString('latin1', 8, 12)).to.equal('WAVE');
    let offset = 12;
    const ids: string[] = [];
    while (offset < file.length) {
      const size = file.readUInt32LE(offset + 4);
      ids.push(file.toString('latin1', offset, offset + 4));
      offset += 8 + size + (size % 2);
    }
    expect(offset).to.equal(file.length);
    expect(ids).to.deep.equal(['fmt ', 'LIST', 'data']);
  });

  it('describes 16-bit mono PCM at 24 kHz and holds every sample', () => {
    const info = parseWav(file)!;
    expect(info).to.include({ formatTag: 1, channels: 1, sampleRate: 24000, bitsPerSample: 16, dataLength: audio.samples.length * 2 });
    expect(info.seconds).to.be.closeTo(audio.samples.length / 24000, 1e-9);
  });

  it('carries the title and the spoken text in LIST/INFO', () => {
    expect(parseWav(file)!.info).to.deep.equal({ INAM: 'Hello', ICMT: 'Hello from the wave file', ISFT: 'tests' });
  });

  it('is byte-for-byte deterministic', () => {
    expect(encodeWav(synthesizeSpeech('Hello from the wave file', 'alloy', 1), { title: 'Hello', text: 'Hello from the wave file', software: 'tests' }).equals(file)).to.equal(true);
  });
});
