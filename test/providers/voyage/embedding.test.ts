import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createVoyageProvider } from '../../../providers/voyage';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import embeddingsResponse from './fixtures/embeddings-response.json';
import invalidRequest from './fixtures/invalid-request.json';
import rateLimited from './fixtures/rate-limited.json';

const ctx = { requestId: 'req_test' };

async function rejectionOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

describe('providers/voyage embedding', () => {
  const fake = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await fake.start(); });
  after(() => fake.stop());
  afterEach(() => fake.reset());

  function embedding(apiKey: string | undefined = 'pa-key') {
    return createVoyageProvider({ id: 'voyage', baseUrl, apiKey }).embedding!('voyage-3.5');
  }

  function expectAuthorizedEmbeddings(sent: RecordedRequest) {
    expect(sent.method).to.equal('POST');
    expect(sent.path).to.equal('/v1/embeddings');
    expect(sent.headers.authorization).to.equal('Bearer pa-key');
  }

  it('returns the embeddings in input order and the total tokens', async () => {
    fake.on('POST /v1/embeddings', { json: embeddingsResponse });

    const result = await embedding().doEmbed({ input: ['first', 'second'] }, ctx);

    // The fixture lists index 1 before index 0.
    expect(result.embeddings).to.deep.equal([embeddingsResponse.data[1].embedding, embeddingsResponse.data[0].embedding]);
    expect(result.usage).to.deep.equal({ inputTokens: 10 });
    expectAuthorizedEmbeddings(fake.requests[0]);
    expect(fake.requests[0].json).to.deep.equal({ input: ['first', 'second'], model: 'voyage-3.5' });
  });

  it('asks for the requested number of dimensions', async () => {
    fake.on('POST /v1/embeddings', { json: embeddingsResponse });

    await embedding().doEmbed({ input: ['first', 'second'], dimensions: 256 }, ctx);

    expect(fake.requests[0].json).to.deep.equal({ input: ['first', 'second'], model: 'voyage-3.5', output_dimension: 256 });
  });

  it('splits large inputs into batches and keeps their order', async () => {
    fake.on('POST /v1/embeddings', (req) => ({
      json: {
        ...embeddingsResponse,
        data: (req.json.input as string[]).map((t, index) => ({ object: 'embedding', embedding: [Number(t)], index })).reverse(),
        usage: { total_tokens: req.json.input.length * 2 },
      },
    }));
    const input = Array.from({ length: 300 }, (_, i) => String(i));

    const result = await embedding().doEmbed({ input }, ctx);

    expect(fake.requests.map((r) => r.json.input.length)).to.deep.equal([128, 128, 44]);
    fake.requests.forEach(expectAuthorizedEmbeddings);
    expect(result.embeddings.map((v) => v[0])).to.deep.equal(input.map(Number));
    expect(result.usage.inputTokens).to.equal(600);
  });

  it('reports a 429 as rate limited with the Retry-After delay', async () => {
    fake.on('POST /v1/embeddings', { status: 429, headers: { 'retry-after': '20' }, json: rateLimited });

    const err = await rejectionOf(embedding().doEmbed({ input: ['first'] }, ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(20_000);
    expectAuthorizedEmbeddings(fake.requests[0]);
  });

  it('reports a 500 as a retryable server error', async () => {
    fake.on('POST /v1/embeddings', { status: 500, json: { detail: 'Internal Server Error' } });

    const err = await rejectionOf(embedding().doEmbed({ input: ['first'] }, ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expectAuthorizedEmbeddings(fake.requests[0]);
  });

  it('gives up on a silent upstream after the call timeout', async () => {
    fake.on('POST /v1/embeddings', { hang: true });

    const err = await rejectionOf(embedding().doEmbed({ input: ['first'] }, { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expectAuthorizedEmbeddings(fake.requests[0]);
  });

  it('treats a body that is not JSON, or embeddings that do not match the input, as a bad response', async () => {
    const [second, first] = embeddingsResponse.data;
    fake.sequence('POST /v1/embeddings', [
      { headers: { 'content-type': 'text/html' }, body: '<html>Bad gateway</html>' },
      { json: { ...embeddingsResponse, data: [first, { ...second, index: 0 }] } },
      { json: { ...embeddingsResponse, data: [first] } },
    ]);

    const notJson = await rejectionOf(embedding().doEmbed({ input: ['first', 'second'] }, ctx));
    const duplicateIndex = await rejectionOf(embedding().doEmbed({ input: ['first', 'second'] }, ctx));
    const tooFew = await rejectionOf(embedding().doEmbed({ input: ['first', 'second'] }, ctx));

    expect([notJson.kind, duplicateIndex.kind, tooFew.kind]).to.deep.equal(['bad_response', 'bad_response', 'bad_response']);
    expect(fake.requests).to.have.length(3);
  });

  it('passes a 400 on as a caller error with Voyage\'s message', async () => {
    fake.on('POST /v1/embeddings', { status: 400, json: invalidRequest });

    const err = await rejectionOf(embedding().doEmbed({ input: ['first'], dimensions: 100 }, ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.message).to.include('output_dimension 100 is not supported');
    expect(fake.requests[0].json.output_dimension).to.equal(100);
  });

  it('is not configured without an API key and then never calls upstream', async () => {
    const provider = createVoyageProvider({ id: 'voyage', baseUrl });

    const err = await rejectionOf(provider.embedding!('voyage-3.5').doEmbed({ input: ['first'] }, ctx));

    expect(provider.configured).to.equal(false);
    expect(err.kind).to.equal('not_configured');
    expect(fake.requests).to.have.length(0);
  });
});
