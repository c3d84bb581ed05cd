import { expect } from 'chai';
import { createGoogleProvider } from '../../../providers/google';
import { FakeUpstream } from '../../support/fake-upstream';
import batchEmbed from './fixtures/batch-embed.json';
import { ctx, upstreamFailure } from './support';

const ROUTE = 'POST /v1beta/models/gemini-embedding-001:batchEmbedContents';

describe('google embedding adapter', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function embedding() {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).embedding!('gemini-embedding-001');
  }

  it('embeds each input and estimates usage at about four characters per token', async () => {
    upstream.on(ROUTE, { json: batchEmbed });

    const result = await embedding().doEmbed({ input: ['hello world', 'a much longer sentence here'], dimensions: 768 }, ctx);

    expect(result.embeddings).to.deep.equal([[0.0123, -0.0456, 0.0789, 0.0012], [-0.0321, 0.0654, -0.0987, 0.0021]]);
    expect(result.usage).to.deep.equal({ inputTokens: 3 + 7 });
    const [sent] = upstream.received(ROUTE);
    expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
    expect(sent.json).to.deep.equal({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 768 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a much longer sentence here' }] }, outputDimensionality: 768 },
      ],
    });
  });

  it('leaves outputDimensionality out unless dimensions are given', async () => {
    upstream.on(ROUTE, { json: { embeddings: [{ values: [1, 2] }] } });
    await embedding().doEmbed({ input: ['x'] }, ctx);
    expect(upstream.received(ROUTE)[0].json.requests[0]).to.deep.equal({ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'x' }] } });
  });

  it('splits large inputs into batches of 100 and keeps the order', async () => {
    upstream.on(ROUTE, (req) => ({ json: { embeddings: req.json.requests.map((r: { content: { parts: Array<{ text: string }> } }) => ({ values: [Number(r.content.parts[0].text)] })) } }));
    const input = Array.from({ length: 250 }, (_, i) => String(i));

    const result = await embedding().doEmbed({ input }, ctx);

    expect(upstream.received(ROUTE).map((r) => r.json.requests.length)).to.deep.equal([100, 100, 50]);
    expect(result.embeddings.map((v) => v[0])).to.deep.equal(input.map(Number));
  });

  it('reports a count of embeddings that does not match the inputs as a bad response', async () => {
    upstream.on(ROUTE, { json: { embeddings: [{ values: [1] }] } });
    expect((await upstreamFailure(embedding().doEmbed({ input: ['a', 'b'] }, ctx))).kind).to.equal('bad_response');
  });

  it('reports upstream failures as classified errors', async () => {
    upstream.on(ROUTE, { status: 400, json: { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' } } });
    const error = await upstreamFailure(embedding().doEmbed({ input: ['a'] }, ctx));
    expect(error.kind).to.equal('caller_error');
    expect(error.message).to.contain('invalid argument');
  });
});
