import { expect } from 'chai';
import invalidRequest from './fixtures/error-invalid-request.json';
import rateLimit from './fixtures/error-rate-limit.json';
import serverError from './fixtures/error-server.json';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('openai-compatible upstream failures', () => {
  const { upstream, provider } = useFakeOpenAI();
  const chatRoute = 'POST /v1/chat/completions';
  const hello = { messages: [{ role: 'user' as const, content: 'Hello' }] };

  function expectChatRequestSent(): void {
    const [sent] = upstream.received(chatRoute);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(sent.json).to.deep.equal({ model: 'gpt-4o-mini', messages: hello.messages });
  }

  it('429 with Retry-After is rate_limited with retryAfterMs', async () => {
    upstream.on(chatRoute, { status: 429, headers: { 'retry-after': '3' }, json: rateLimit });

    const error = await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, ctx), 'rate_limited');

    expect(error.retryAfterMs).to.equal(3000);
    expect(error.retryable).to.equal(true);
    expectChatRequestSent();
  });

  it('500 is a retryable server_error', async () => {
    upstream.on(chatRoute, { status: 500, json: serverError });

    const error = await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, ctx), 'server_error');

    expect(error.retryable).to.equal(true);
    expectChatRequestSent();
  });

  it('a host that never answers is a timeout after ctx.timeoutMs', async () => {
    upstream.on(chatRoute, { hang: true });
    const started = Date.now();

    await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, { ...ctx, timeoutMs: 200 }), 'timeout');

    expect(Date.now() - started).to.be.within(150, 5000);
    expectChatRequestSent();
  });

  it('falls back to the host timeout from the options when the call sets none', async () => {
    upstream.on('POST /v1/embeddings', { hang: true });

    await expectUpstreamError(provider({ timeoutMs: 200 }).embedding!('text-embedding-3-small').doEmbed({ input: ['a'] }, ctx), 'timeout');
  });

  it('a connection reset is a network failure', async () => {
    upstream.on(chatRoute, { reset: true });

    await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, ctx), 'network');
    expectChatRequestSent();
  });

  it('a body that is not JSON is a bad_response', async () => {
    upstream.on(chatRoute, { headers: { 'content-type': 'application/json' }, body: '<html>502 Bad Gateway</html>' });

    await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, ctx), 'bad_response');
    expectChatRequestSent();
  });

  it('400 with an OpenAI error body is a caller_error carrying the upstream message', async () => {
    upstream.on(chatRoute, { status: 400, json: invalidRequest });

    const error = await expectUpstreamError(provider().chat!('gpt-4o-mini').doGenerate(hello, ctx), 'caller_error');

    expect(error.message).to.include("Invalid type for 'temperature': expected a decimal, but got a string instead.");
    expect(error.retryable).to.equal(false);
    expect(error.status).to.equal(400);
    expectChatRequestSent();
  });

  it('classifies failures the same way for the other modalities', async () => {
    upstream.on('POST /v1/images/generations', { status: 429, headers: { 'retry-after-ms': '1500' }, json: rateLimit });
    upstream.on('POST /v1/audio/speech', { status: 503, json: serverError });

    const throttled = await expectUpstreamError(provider().image!('gpt-image-1').doGenerate({ prompt: 'otter', n: 1, params: {} }, ctx), 'rate_limited');
    await expectUpstreamError(provider().speech!('tts-1').doSynthesize({ input: 'Hi', voice: 'alloy', format: 'mp3', speed: 1 }, ctx), 'server_error');

    expect(throttled.retryAfterMs).to.equal(1500);
  });
});
