import { expect } from 'chai';
import {
  embedTextInSamples, extractTextFromSamples, speechSeconds, synthesizeMelody, synthesizeSpeech,
} from '../../../simulator/media/synth';

describe('simulated media: synthesis', () => {
  it('speaks for about 60 ms per character, at least half a second, divided by the speed', () => {
    expect(speechSeconds('x'.repeat(100), 1)).to.be.closeTo(6, 1e-9);
    expect(speechSeconds('x'.repeat(100), 2)).to.be.closeTo(3, 1e-9);
    expect(speechSeconds('x'.repeat(100), 0.25)).to.be.closeTo(24, 1e-9);
    expect(speechSeconds('hi', 1)).to.equal(0.5);
    expect(speechSeconds('x'.repeat(100), 100)).to.be.closeTo(1.5, 1e-9); // speed clamped to 4
  });

  it('produces audible, deterministic speech whose pitch depends on the voice', () => {
    const a = synthesizeSpeech('The same words again', 'alloy', 1);
    const b = synthesizeSpeech('The same words again', 'alloy', 1);
    const c = synthesizeSpeech('The same words again', 'onyx', 1);
    expect(a.sampleRate).to.equal(24000);
    expect(Buffer.from(a.samples.buffer).equals(Buffer.from(b.samples.buffer))).to.equal(true);
    expect(Buffer.from(a.samples.buffer).equals(Buffer.from(c.samples.buffer))).to.equal(false);
    expect(Math.max(...a.samples.map(Math.abs))).to.be.greaterThan(5000);
  });

  it('makes a melody of the requested length', () => {
    const track = synthesizeMelody('calm piano', 3, 7);
    expect(track.samples.length).to.equal(3 * track.sampleRate);
    expect(Buffer.from(synthesizeMelody('calm piano', 3, 7).samples.buffer).equals(Buffer.from(track.samples.buffer))).to.equal(true);
    expect(Buffer.from(synthesizeMelody('calm piano', 3, 8).samples.buffer).equals(Buffer.from(track.samples.buffer))).to.equal(false);
  });

  it('hides text in the samples and reads it back', () => {
    const audio = synthesizeSpeech('Ünïcødé text ✓ survives', 'nova', 1);
    embedTextInSamples(audio.samples, 'Ünïcødé text ✓ survives');
    expect(extractTextFromSamples(audio.samples)).to.equal('Ünïcødé text ✓ survives');
    expect(extractTextFromSamples(synthesizeSpeech('plain', 'nova', 1).samples)).to.equal(null);
  });
});
