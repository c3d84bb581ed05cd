import { expect } from 'chai';
import embeddings from './fixtures/embeddings.json';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('openai-compatible embeddings', () => {
  const { upstream, provider } = useFakeOpenAI();
  const route = 'POST /v1/embeddings';

  it('asks for float vectors, returns them in input order with the usage', async () => {
    upstream.on(route, { json: embeddings });

    const result = await provider().embedding!('text-embedding-3-small').doEmbed({ input: ['first', 'second'], dimensions: 3 }, ctx);

    expect(result).to.deep.equal({
      embeddings: [[-0.006929283, -0.005336422, 0.024047505], [0.0023064255, -0.009327292, 0.015797347]],
      usage: { inputTokens: 8 },
    });
    const [sent] = upstream.received(route);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(sent.json).to.deep.equal({ model: 'text-embedding-3-small', input: ['first', 'second'], encoding_format: 'float', dimensions: 3 });
  });

  it('sends token ids as OpenAI takes them: input as lists of ids', async () => {
    upstream.on(route, { json: embeddings });

    const model = provider().embedding!('text-embedding-3-small');
    const result = await model.doEmbed({ input: [], tokens: [[1734, 2048], [99]] }, ctx);

    expect(model.tokenInput).to.equal(true);
    expect(result.embeddings).to.have.length(2);
    expect(upstream.received(route)[0].json).to.deep.equal({ model: 'text-embedding-3-small', input: [[1734, 2048], [99]], encoding_format: 'float' });
  });

  it('leaves dimensions out when the request has none', async () => {
    upstream.on(route, { json: { ...embeddings, data: [embeddings.data[1]] } });

    await provider().embedding!('text-embedding-3-small').doEmbed({ input: ['only'] }, ctx);

    expect(upstream.received(route)[0].json).to.deep.equal({ model: 'text-embedding-3-small', input: ['only'], encoding_format: 'float' });
  });

  it('rejects base64 vectors or a count that does not match the input as bad_response', async () => {
    upstream.sequence(route, [
      { json: { object: 'list', data: [{ object: 'embedding', index: 0, embedding: 'AAAAAA==' }], usage: { prompt_tokens: 1, total_tokens: 1 } } },
      { json: embeddings },
    ]);
    const model = provider().embedding!('text-embedding-3-small');

    await expectUpstreamError(model.doEmbed({ input: ['a'] }, ctx), 'bad_response');
    await expectUpstreamError(model.doEmbed({ input: ['a', 'b', 'c'] }, ctx), 'bad_response');
  });
});
