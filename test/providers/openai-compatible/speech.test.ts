import { expect } from 'chai';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('openai-compatible speech', () => {
  const { upstream, provider } = useFakeOpenAI();
  const route = 'POST /v1/audio/speech';
  const mp3 = Buffer.from([0xff, 0xf3, 0x44, 0xc4, 0x00, 0x00, 0x00, 0x03, 0x48, 0x00]);

  it('sends the speech request as JSON and returns the audio bytes with their media type', async () => {
    upstream.on(route, { headers: { 'content-type': 'audio/mpeg' }, body: mp3 });

    const result = await provider().speech!('gpt-4o-mini-tts').doSynthesize({ input: 'Today is a wonderful day.', voice: 'coral', format: 'mp3', speed: 1.25, instructions: 'Speak cheerfully.' }, ctx);

    expect(result.audio.equals(mp3)).to.equal(true);
    expect(result.mediaType).to.equal('audio/mpeg');
    const [sent] = upstream.received(route);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(sent.json).to.deep.equal({
      model: 'gpt-4o-mini-tts', input: 'Today is a wonderful day.', voice: 'coral', response_format: 'mp3', speed: 1.25, instructions: 'Speak cheerfully.',
    });
  });

  it('names the media type after the requested format, whatever label the host used', async () => {
    upstream.on(route, { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from('OggS-opus-bytes') });

    const result = await provider().speech!('tts-1').doSynthesize({ input: 'Hi', voice: 'alloy', format: 'opus', speed: 1 }, ctx);

    expect(result.mediaType).to.equal('audio/ogg');
    expect(upstream.received(route)[0].json).to.deep.equal({ model: 'tts-1', input: 'Hi', voice: 'alloy', response_format: 'opus', speed: 1 });
  });

  it('rejects an empty or JSON answer as bad_response', async () => {
    upstream.sequence(route, [
      { headers: { 'content-type': 'audio/mpeg' }, body: Buffer.alloc(0) },
      { json: { status: 'ok' } },
    ]);
    const model = provider().speech!('tts-1');

    await expectUpstreamError(model.doSynthesize({ input: 'Hi', voice: 'alloy', format: 'mp3', speed: 1 }, ctx), 'bad_response');
    await expectUpstreamError(model.doSynthesize({ input: 'Hi', voice: 'alloy', format: 'mp3', speed: 1 }, ctx), 'bad_response');
  });
});
