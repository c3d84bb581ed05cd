import { expect } from 'chai';
import { formatTranscript, timestamp } from '../../../endpoints/audio/transcripts';
import type { TranscriptionResult } from '../../../providers/types';

const result: TranscriptionResult = {
  text: ' Hello there. General Kenobi. ',
  language: 'en',
  durationSeconds: 4.5,
  segments: [
    { id: 0, start: 0, end: 1.25, text: ' Hello there.' },
    { id: 1, start: 1.25, end: 4.5, text: ' General Kenobi.' },
  ],
};

describe('formatTranscript', () => {
  it('json: the text and the billed duration', () => {
    expect(formatTranscript(result, { format: 'json', seconds: 4.5 })).to.deep.equal({
      kind: 'json', body: { text: 'Hello there. General Kenobi.', usage: { type: 'duration', seconds: 4.5 } },
    });
  });

  it('text: the text and a newline, as plain text', () => {
    expect(formatTranscript(result, { format: 'text', seconds: 4.5 })).to.deep.equal({ kind: 'text', text: 'Hello there. General Kenobi.\n', contentType: 'text/plain; charset=utf-8' });
  });

  it('srt and vtt: one numbered cue per segment with their timestamp styles', () => {
    const srt = formatTranscript(result, { format: 'srt', seconds: 4.5 });
    expect(srt).to.include({ kind: 'text' });
    expect((srt as { text: string }).text).to.equal('1\n00:00:00,000 --> 00:00:01,250\nHello there.\n\n2\n00:00:01,250 --> 00:00:04,500\nGeneral Kenobi.\n');
    const vtt = formatTranscript(result, { format: 'vtt', seconds: 4.5 });
    expect((vtt as { text: string }).text).to.equal('WEBVTT\n\n00:00:00.000 --> 00:00:01.250\nHello there.\n\n00:00:01.250 --> 00:00:04.500\nGeneral Kenobi.\n');
  });

  it('a result without segments becomes one cue over the whole audio', () => {
    const srt = formatTranscript({ ...result, segments: [] }, { format: 'srt', seconds: 4.5 });
    expect((srt as { text: string }).text).to.equal('1\n00:00:00,000 --> 00:00:04,500\nHello there. General Kenobi.\n');
  });

  it('verbose_json: segments by default; words interpolated within their segment when asked', () => {
    const plain = formatTranscript(result, { format: 'verbose_json', seconds: 4.5 }) as { body: Record<string, any> };
    // OpenAI's verbose answers name the language.
    expect(plain.body).to.include({ task: 'transcribe', language: 'english', duration: 4.5, text: 'Hello there. General Kenobi.' });
    // OpenAI's segment fields; without the provider's decoding details, neutral values (seek at the start in 10 ms frames).
    const neutral = { tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 1, no_speech_prob: 0 };
    expect(plain.body.segments).to.deep.equal([
      { id: 0, seek: 0, start: 0, end: 1.25, text: 'Hello there.', ...neutral },
      { id: 1, seek: 125, start: 1.25, end: 4.5, text: 'General Kenobi.', ...neutral },
    ]);
    const decoded = { seek: 0, tokens: [50364, 2425], temperature: 0.2, avgLogprob: -0.3, compressionRatio: 1.1, noSpeechProb: 0.01 };
    const upstream = formatTranscript({ ...result, segments: [{ ...result.segments[0], decoding: decoded }] }, { format: 'verbose_json', seconds: 4.5 }) as { body: Record<string, any> };
    expect(upstream.body.segments[0]).to.include({ seek: 0, temperature: 0.2, avg_logprob: -0.3, compression_ratio: 1.1, no_speech_prob: 0.01 });
    expect(upstream.body.segments[0].tokens).to.deep.equal([50364, 2425]);
    expect(plain.body).to.not.have.property('words');
    const words = formatTranscript(result, { format: 'verbose_json', seconds: 4.5, granularities: ['word'] }) as { body: Record<string, any> };
    expect(words.body).to.not.have.property('segments');
    expect(words.body.words.map((w: { word: string }) => w.word)).to.deep.equal(['Hello', 'there.', 'General', 'Kenobi.']);
    // Shared by length: "Hello" (5) and "there." (6) split 1.25 s; each segment's words end where it ends.
    expect(words.body.words[0]).to.deep.equal({ word: 'Hello', start: 0, end: 0.568 });
    expect(words.body.words[1].end).to.equal(1.25);
    expect(words.body.words[3].end).to.equal(4.5);
  });

  it('timestamps carry hours and milliseconds', () => {
    expect(timestamp(3723.4567, ',')).to.equal('01:02:03,457');
    expect(timestamp(0.0004, '.')).to.equal('00:00:00.000');
  });
});
