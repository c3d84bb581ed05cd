import { expect } from 'chai';
import { encodeMp3, parseMp3 } from '../../../simulator/media/mp3';
import { parseId3 } from '../../../simulator/media/id3';
import { synthesizeSpeech } from '../../../simulator/media/synth';

describe('simulated media: MP3', () => {
  const text = 'An MP3 with its words in an ID3 tag, ünïcødé included.';
  const audio = synthesizeSpeech(text, 'echo', 1);
  const file = encodeMp3(audio, { title: 'An MP3', text, software: 'tests' });

  it('starts with an ID3v2.4 tag holding the title and the spoken text (USLT)', () => {
    expect(file.toString('latin1', 0, 3)).to.equal('ID3');
    expect(file[3]).to.equal(4);
    expect(parseId3(file)!.frames).to.deep.equal({ TIT2: 'An MP3', USLT: text, TSSE: 'tests' });
  });

  it('continues with MPEG Layer III frames, each starting with a frame sync, up to the end', () => {
    const info = parseMp3(file)!;
    const firstHeader = file.readUInt32BE(info.firstFrameOffset);
    expect(firstHeader >>> 21).to.equal(0x7ff);
    expect((firstHeader >>> 17) & 3).to.equal(1); // layer III
    expect(info.sampleRate).to.equal(24000);
    expect(info.channels).to.equal(1);
    expect(info.frames).to.be.greaterThan(10);
    // Walking frame by frame lands exactly on the end of the file (no trailing garbage, no short frame).
    expect(info.endOffset).to.equal(file.length);
    expect(info.seconds).to.be.closeTo(audio.samples.length / 24000, 0.2);
  });

  it('is deterministic', () => {
    expect(encodeMp3(synthesizeSpeech(text, 'echo', 1), { title: 'An MP3', text, software: 'tests' }).equals(file)).to.equal(true);
  });
});
