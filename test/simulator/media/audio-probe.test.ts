import { expect } from 'chai';
import { AudioFormat, encodeAudio } from '../../../simulator/media/audio';
import { probeAudio } from '../../../simulator/media/audio-probe';
import { embedTextInSamples, synthesizeSpeech } from '../../../simulator/media/synth';

describe('simulated media: audio probe', () => {
  const text = 'Probe me in every format, please.';
  const audio = synthesizeSpeech(text, 'alloy', 1);
  embedTextInSamples(audio.samples, text);
  const seconds = audio.samples.length / audio.sampleRate;

  for (const format of ['wav', 'pcm', 'mp3', 'flac', 'opus', 'aac'] as AudioFormat[]) {
    it(`recognizes ${format}, its duration and the embedded text`, () => {
      const file = encodeAudio(format, audio, { title: 'Probe', text });
      const probe = probeAudio(file, format === 'pcm' ? { mediaType: 'audio/pcm' } : {});
      expect(probe.format).to.equal(format);
      expect(probe.text).to.equal(text);
      expect(probe.seconds).to.be.closeTo(seconds, format === 'mp3' || format === 'aac' ? 0.15 : 1e-6);
    });
  }

  it('finds the hidden text in raw PCM even without a hint', () => {
    expect(probeAudio(encodeAudio('pcm', audio)).format).to.equal('pcm');
  });

  it('estimates the length of audio it cannot read', () => {
    const probe = probeAudio(Buffer.alloc(32_000, 7), { filename: 'clip.m4a' });
    expect(probe).to.deep.equal({ format: 'unknown', seconds: 2, text: null });
  });
});
