import { expect } from 'chai';
import plainJson from './fixtures/transcription-json.json';
import verbose from './fixtures/transcription-verbose.json';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';
import { parseMultipart } from './multipart';

describe('openai-compatible transcription', () => {
  const { upstream, provider } = useFakeOpenAI();
  const route = 'POST /v1/audio/transcriptions';
  const audio = Buffer.from('ID3-fake-mp3-audio');
  const request = { audio, filename: 'beach.mp3', mediaType: 'audio/mpeg' };

  it('uploads the audio as multipart, asks for verbose_json and returns duration and segments', async () => {
    upstream.on(route, { json: verbose });

    const result = await provider().transcription!('whisper-1').doTranscribe({ ...request, language: 'en', prompt: 'Beach day', temperature: 0.2 }, ctx);

    expect(result).to.deep.equal({
      text: verbose.text,
      language: 'english',
      durationSeconds: 8.470000267028809,
      // Whisper's decoding details come along for verbose_json answers.
      segments: verbose.segments.map((s) => ({
        id: s.id, start: s.start, end: s.end, text: s.text,
        decoding: { seek: s.seek, tokens: s.tokens, temperature: s.temperature, avgLogprob: s.avg_logprob, compressionRatio: s.compression_ratio, noSpeechProb: s.no_speech_prob },
      })),
    });
    expect(result.segments.map((s) => s.text)).to.deep.equal([' The beach was a popular spot on a hot summer day.', ' People were swimming in the ocean.']);
    const [sent] = upstream.received(route);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    const form = await parseMultipart(sent);
    expect(form.fields).to.deep.equal({ model: 'whisper-1', response_format: 'verbose_json', language: 'en', prompt: 'Beach day', temperature: '0.2' });
    expect(form.files).to.have.length(1);
    expect(form.files[0]).to.include({ field: 'file', filename: 'beach.mp3', mediaType: 'audio/mpeg' });
    expect(form.files[0].data.equals(audio)).to.equal(true);
  });

  it('falls back to usage.seconds and no segments when the host answers plain json', async () => {
    upstream.on(route, { json: plainJson });

    const result = await provider().transcription!('whisper-large-v3').doTranscribe(request, ctx);

    expect(result).to.deep.equal({ text: plainJson.text, durationSeconds: 12, segments: [] });
  });

  it('reports a duration of 0 (unknown) when the host gives none', async () => {
    upstream.on(route, { json: { text: 'Hello.' } });

    const result = await provider().transcription!('whisper-large-v3').doTranscribe(request, ctx);

    expect(result).to.deep.equal({ text: 'Hello.', durationSeconds: 0, segments: [] });
  });

  it('asks for plain json for the models the option names', async () => {
    upstream.on(route, { json: plainJson });
    const openai = provider({ plainJsonTranscription: (model) => model.startsWith('gpt-4o') });

    await openai.transcription!('gpt-4o-transcribe').doTranscribe(request, ctx);

    const form = await parseMultipart(upstream.received(route)[0]);
    expect(form.fields).to.deep.equal({ model: 'gpt-4o-transcribe', response_format: 'json' });
  });

  it('rejects an answer without text as bad_response', async () => {
    upstream.on(route, { json: { task: 'transcribe', duration: 3 } });

    await expectUpstreamError(provider().transcription!('whisper-1').doTranscribe(request, ctx), 'bad_response');
  });
});
