import { expect } from 'chai';
import { createGoogleProvider } from '../../../providers/google';
import type { ChatRequest } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import internal from './fixtures/error-internal.json';
import invalidArgument from './fixtures/error-invalid-argument.json';
import resourceExhausted from './fixtures/error-resource-exhausted.json';
import unavailable from './fixtures/error-unavailable.json';
import { collect, ctx, upstreamFailure } from './support';

const ROUTE = 'POST /v1beta/models/gemini-2.5-pro:generateContent';
const REQUEST: ChatRequest = { messages: [{ role: 'user', content: 'Hi' }] };

describe('google chat adapter (failures)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat() {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).chat!('gemini-2.5-pro');
  }

  function lastRequestWasAuthenticated() {
    const [sent] = upstream.received(ROUTE);
    expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
    expect(sent.json).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  }

  it('reports 429 as rate_limited with the Retry-After delay', async () => {
    upstream.on(ROUTE, { status: 429, headers: { 'retry-after': '12' }, json: resourceExhausted });
    const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
    expect(error.kind).to.equal('rate_limited');
    expect(error.retryAfterMs).to.equal(12_000);
    expect(error.message).to.contain('exceeded your current quota');
    lastRequestWasAuthenticated();
  });

  it('reports 500 and 503 as retryable server errors', async () => {
    for (const [status, body] of [[500, internal], [503, unavailable]] as const) {
      upstream.reset();
      upstream.on(ROUTE, { status, json: body });
      const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
      expect(error.kind, String(status)).to.equal('server_error');
      expect(error.retryable).to.equal(true);
      lastRequestWasAuthenticated();
    }
  });

  it('reports a 400 as a caller error carrying the provider message', async () => {
    upstream.on(ROUTE, { status: 400, json: invalidArgument });
    const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
    expect(error.kind).to.equal('caller_error');
    expect(error.status).to.equal(400);
    expect(error.message).to.contain('max_output_tokens must be positive');
    lastRequestWasAuthenticated();
  });

  it('times out when the upstream hangs past the attempt deadline', async () => {
    upstream.on(ROUTE, { hang: true });
    const error = await upstreamFailure(chat().doGenerate(REQUEST, { requestId: 'r', timeoutMs: 150 }));
    expect(error.kind).to.equal('timeout');
    lastRequestWasAuthenticated();
  });

  it('reports a body that is not JSON, or has no candidates, as a bad response', async () => {
    upstream.on(ROUTE, { body: 'Service Unavailable', headers: { 'content-type': 'text/plain' } });
    expect((await upstreamFailure(chat().doGenerate(REQUEST, ctx))).kind).to.equal('bad_response');

    upstream.reset();
    upstream.on(ROUTE, { json: { usageMetadata: { promptTokenCount: 3 } } });
    expect((await upstreamFailure(chat().doGenerate(REQUEST, ctx))).kind).to.equal('bad_response');
    lastRequestWasAuthenticated();
  });

  it('is not configured without an API key and never calls upstream', async () => {
    const provider = createGoogleProvider({ id: 'google', baseUrl });
    expect(provider.configured).to.equal(false);
    expect(provider.family).to.equal('google');
    expect((await upstreamFailure(provider.chat!('gemini-2.5-pro').doGenerate(REQUEST, ctx))).kind).to.equal('not_configured');
    expect((await upstreamFailure(collect(provider.chat!('gemini-2.5-pro').doStream(REQUEST, ctx)))).kind).to.equal('not_configured');
    expect((await upstreamFailure(provider.embedding!('gemini-embedding-001').doEmbed({ input: ['x'] }, ctx))).kind).to.equal('not_configured');
    expect((await upstreamFailure(provider.image!('imagen-4.0-generate-001').doGenerate({ prompt: 'x', n: 1, params: {} }, ctx))).kind).to.equal('not_configured');
    expect((await upstreamFailure(provider.video!('veo-3.0-generate-001').doSubmit({ prompt: 'x', n: 1, params: {} }, ctx))).kind).to.equal('not_configured');
    expect((await upstreamFailure(provider.video!('veo-3.0-generate-001').doPoll('models/veo-3.0-generate-001/operations/a', ctx))).kind).to.equal('not_configured');
    expect(upstream.requests).to.have.length(0);
  });
});
