import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createCohereProvider } from '../../../providers/cohere';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import embedResponse from './fixtures/embed-response.json';
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

describe('providers/cohere embedding', () => {
  const fake = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await fake.start(); });
  after(() => fake.stop());
  afterEach(() => fake.reset());

  function embedding(apiKey: string | undefined = 'co-key') {
    return createCohereProvider({ id: 'cohere', baseUrl, apiKey }).embedding!('embed-v4.0');
  }

  function expectAuthorizedEmbed(sent: RecordedRequest) {
    expect(sent.method).to.equal('POST');
    expect(sent.path).to.equal('/v2/embed');
    expect(sent.headers.authorization).to.equal('Bearer co-key');
  }

  it('embeds documents as floats and reports the billed input tokens', async () => {
    fake.on('POST /v2/embed', { json: embedResponse });

    const result = await embedding().doEmbed({ input: ['hello', 'goodbye'] }, ctx);

    expect(result.embeddings).to.deep.equal(embedResponse.embeddings.float);
    expect(result.usage).to.deep.equal({ inputTokens: 2 });
    const [sent] = fake.requests;
    expectAuthorizedEmbed(sent);
    expect(sent.json).to.deep.equal({
      model: 'embed-v4.0', texts: ['hello', 'goodbye'], input_type: 'search_document', embedding_types: ['float'],
    });
  });

  it('asks for the requested number of dimensions', async () => {
    fake.on('POST /v2/embed', { json: embedResponse });

    await embedding().doEmbed({ input: ['hello', 'goodbye'], dimensions: 512 }, ctx);

    expect(fake.requests[0].json.output_dimension).to.equal(512);
  });

  it('splits more than 96 texts into batches and keeps their order', async () => {
    fake.on('POST /v2/embed', (req) => ({
      json: {
        ...embedResponse,
        embeddings: { float: (req.json.texts as string[]).map((t) => [Number(t)]) },
        texts: req.json.texts,
        meta: { billed_units: { input_tokens: req.json.texts.length } },
      },
    }));
    const input = Array.from({ length: 200 }, (_, i) => String(i));

    const result = await embedding().doEmbed({ input }, ctx);

    expect(fake.requests.map((r) => r.json.texts.length)).to.deep.equal([96, 96, 8]);
    fake.requests.forEach(expectAuthorizedEmbed);
    expect(result.embeddings.map((v) => v[0])).to.deep.equal(input.map(Number));
    expect(result.usage.inputTokens).to.equal(200);
  });

  it('reports a 429 as rate limited with the Retry-After delay', async () => {
    fake.on('POST /v2/embed', { status: 429, headers: { 'retry-after': '12' }, json: rateLimited });

    const err = await rejectionOf(embedding().doEmbed({ input: ['hello'] }, ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(12_000);
    expect(err.message).to.include('Trial key');
    expectAuthorizedEmbed(fake.requests[0]);
  });

  it('reports a 500 as a retryable server error', async () => {
    fake.on('POST /v2/embed', { status: 500, json: { id: 'x', message: 'internal server error' } });

    const err = await rejectionOf(embedding().doEmbed({ input: ['hello'] }, ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expectAuthorizedEmbed(fake.requests[0]);
  });

  it('gives up on a silent upstream after the call timeout', async () => {
    fake.on('POST /v2/embed', { hang: true });

    const err = await rejectionOf(embedding().doEmbed({ input: ['hello'] }, { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expectAuthorizedEmbed(fake.requests[0]);
  });

  it('treats a body that is not JSON, or lacks one vector per text, as a bad response', async () => {
    fake.sequence('POST /v2/embed', [
      { headers: { 'content-type': 'application/json' }, body: '{"embeddings": ' },
      { json: { ...embedResponse, embeddings: { int8: [[1, 2]] } } },
      { json: embedResponse },
    ]);

    const notJson = await rejectionOf(embedding().doEmbed({ input: ['hello', 'goodbye'] }, ctx));
    const noFloats = await rejectionOf(embedding().doEmbed({ input: ['hello', 'goodbye'] }, ctx));
    const tooFew = await rejectionOf(embedding().doEmbed({ input: ['a', 'b', 'c'] }, ctx));

    expect([notJson.kind, noFloats.kind, tooFew.kind]).to.deep.equal(['bad_response', 'bad_response', 'bad_response']);
    expect(fake.requests).to.have.length(3);
  });

  it('passes a 400 on as a caller error with Cohere\'s message', async () => {
    fake.on('POST /v2/embed', { status: 400, json: invalidRequest });

    const err = await rejectionOf(embedding().doEmbed({ input: ['hello'], dimensions: 100 }, ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.retryable).to.equal(false);
    expect(err.message).to.include('output_dimension 100 is not supported');
    expect(fake.requests[0].json.output_dimension).to.equal(100);
  });

  it('is not configured without an API key and then never calls upstream', async () => {
    const provider = createCohereProvider({ id: 'cohere', baseUrl });

    const err = await rejectionOf(provider.embedding!('embed-v4.0').doEmbed({ input: ['hello'] }, ctx));

    expect(provider.configured).to.equal(false);
    expect(err.kind).to.equal('not_configured');
    expect(fake.requests).to.have.length(0);
  });
});
