import { expect } from 'chai';
import { createAnthropicProvider } from '../../../providers/anthropic';
import type { ChatRequest } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import apiError from './fixtures/error-api.json';
import invalidRequest from './fixtures/error-invalid-request.json';
import overloaded from './fixtures/error-overloaded.json';
import rateLimit from './fixtures/error-rate-limit.json';
import { collect, ctx, upstreamFailure } from './support';

const REQUEST: ChatRequest = { messages: [{ role: 'user', content: 'Hi' }] };

describe('anthropic chat adapter (failures)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat(apiKey: string | undefined = 'sk-ant-test') {
    return createAnthropicProvider({ id: 'anthropic', baseUrl, apiKey }).chat!('claude-opus-4-1');
  }

  function lastRequestWasAuthenticated() {
    const [sent] = upstream.received('POST /v1/messages');
    expect(sent.headers['x-api-key']).to.equal('sk-ant-test');
    expect(sent.json.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  }

  it('reports 429 as rate_limited with the Retry-After delay', async () => {
    upstream.on('POST /v1/messages', { status: 429, headers: { 'retry-after': '7' }, json: rateLimit });
    const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
    expect(error.kind).to.equal('rate_limited');
    expect(error.retryable).to.equal(true);
    expect(error.retryAfterMs).to.equal(7000);
    expect(error.message).to.contain('50 requests per minute');
    lastRequestWasAuthenticated();
  });

  it('reports 500 and 529 overloaded as retryable server errors', async () => {
    for (const [status, body] of [[500, apiError], [529, overloaded]] as const) {
      upstream.reset();
      upstream.on('POST /v1/messages', { status, json: body });
      const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
      expect(error.kind, String(status)).to.equal('server_error');
      expect(error.retryable).to.equal(true);
      expect(error.upstreamStatus).to.equal(status);
      lastRequestWasAuthenticated();
    }
  });

  it('reports a 400 as a caller error carrying the provider message', async () => {
    upstream.on('POST /v1/messages', { status: 400, json: invalidRequest });
    const error = await upstreamFailure(chat().doGenerate(REQUEST, ctx));
    expect(error.kind).to.equal('caller_error');
    expect(error.retryable).to.equal(false);
    expect(error.status).to.equal(400);
    expect(error.message).to.contain('max_tokens: 100000 > 64000');
    lastRequestWasAuthenticated();
  });

  it('times out when the upstream hangs past the attempt deadline', async () => {
    upstream.on('POST /v1/messages', { hang: true });
    const started = Date.now();
    const error = await upstreamFailure(chat().doGenerate(REQUEST, { requestId: 'r', timeoutMs: 150 }));
    expect(error.kind).to.equal('timeout');
    expect(Date.now() - started).to.be.lessThan(2000);
    lastRequestWasAuthenticated();
  });

  it('reports a body that is not JSON, or JSON of the wrong shape, as a bad response', async () => {
    upstream.on('POST /v1/messages', { body: '<html>oops</html>', headers: { 'content-type': 'text/html' } });
    expect((await upstreamFailure(chat().doGenerate(REQUEST, ctx))).kind).to.equal('bad_response');

    upstream.reset();
    upstream.on('POST /v1/messages', { json: { id: 'msg_1', type: 'message' } });
    expect((await upstreamFailure(chat().doGenerate(REQUEST, ctx))).kind).to.equal('bad_response');
    lastRequestWasAuthenticated();
  });

  it('is not configured without an API key and never calls upstream', async () => {
    const provider = createAnthropicProvider({ id: 'anthropic', baseUrl });
    expect(provider.configured).to.equal(false);
    expect(provider.family).to.equal('anthropic');

    const generate = await upstreamFailure(provider.chat!('claude-opus-4-1').doGenerate(REQUEST, ctx));
    expect(generate.kind).to.equal('not_configured');
    const stream = await upstreamFailure(collect(provider.chat!('claude-opus-4-1').doStream(REQUEST, ctx)));
    expect(stream.kind).to.equal('not_configured');
    expect(upstream.requests).to.have.length(0);
  });
});
