import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createOpenAICompatibleProvider } from '../../../providers/openai-compatible';
import textChunks from './fixtures/chat-stream-text.json';
import toolCallChunks from './fixtures/chat-stream-tool-calls.json';
import rateLimit from './fixtures/error-rate-limit.json';
import { API_KEY, collect, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('openai-compatible chat (doStream)', () => {
  const { upstream, provider } = useFakeOpenAI();
  const route = 'POST /v1/chat/completions';
  const hello = { messages: [{ role: 'user' as const, content: 'Hello' }] };

  it('streams text deltas and ends with one finish carrying the usage chunk', async () => {
    upstream.on(route, { sse: textChunks });

    const parts = await collect(provider().chat!('gpt-4o-mini').doStream({ ...hello, maxTokens: 20 }, ctx));

    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: ' there' },
      { type: 'text-delta', delta: '!' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 3 } },
    ]);
    const [sent] = upstream.received(route);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(sent.json).to.deep.equal({
      model: 'gpt-4o-mini', messages: hello.messages, max_tokens: 20, stream: true, stream_options: { include_usage: true },
    });
  });

  it('streams tool-call deltas by index as OpenAI sends them', async () => {
    upstream.on(route, { sse: toolCallChunks });

    const parts = await collect(provider().chat!('gpt-4o-mini').doStream({ ...hello, tools: [{ type: 'function', function: { name: 'get_weather' } }] }, ctx));

    expect(parts).to.deep.equal([
      { type: 'tool-call-delta', index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'location' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '":"Paris"}' },
      { type: 'tool-call-delta', index: 1, id: 'call_a1B2c3D4e5F6g7H8i9J0k1L2', name: 'get_time', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"tz":"CET"}' },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 88, outputTokens: 31 } },
    ]);
  });

  it('names the choice of each part and carries its log probabilities when the host streams several choices', async () => {
    const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null, logprobs: unknown = null) => ({
      id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index, delta, logprobs, finish_reason: finish }],
    });
    const hi = { content: [{ token: 'Hi', logprob: -0.2, bytes: [72, 105], top_logprobs: [] }], refusal: null };
    upstream.on(route, {
      sse: [
        chunk(0, { role: 'assistant', content: '' }), chunk(1, { role: 'assistant', content: '' }),
        chunk(0, { content: 'Hi' }, null, hi), chunk(1, { content: 'Yo' }),
        chunk(1, {}, 'length'), chunk(0, {}, 'stop'),
        { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } },
        '[DONE]',
      ],
    });

    const parts = await collect(provider({ nativeChoices: true }).chat!('gpt-4o-mini').doStream({ ...hello, n: 2, logprobs: true }, ctx));

    expect(upstream.received(route)[0].json).to.include({ n: 2, logprobs: true });
    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Hi', logprobs: hi.content },
      { type: 'text-delta', delta: 'Yo', choice: 1 },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 4, outputTokens: 2 }, finishReasons: ['stop', 'length'] },
    ]);
  });

  it('leaves usage at zeros when the host sends no usage chunk', async () => {
    const withoutUsage = textChunks.filter((chunk) => typeof chunk === 'string' || chunk.usage === null);
    upstream.on(route, { sse: withoutUsage });

    const parts = await collect(provider().chat!('llama-3.3-70b').doStream(hello, ctx));

    expect(parts.at(-1)).to.deep.equal({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } });
    expect(parts.filter((part) => part.type === 'finish')).to.have.length(1);
  });

  it('throws an upstream failure from the first next(), before any part', async () => {
    upstream.on(route, { status: 429, headers: { 'retry-after': '2' }, json: rateLimit });
    const iterator = provider().chat!('gpt-4o-mini').doStream(hello, ctx)[Symbol.asyncIterator]();

    const error = await expectUpstreamError(iterator.next(), 'rate_limited');

    expect(error.retryAfterMs).to.equal(2000);
  });

  it('fails with bad_response on a chunk that is not JSON', async () => {
    upstream.on(route, { sse: [textChunks[1], '{"choices": [', '[DONE]'] });

    await expectUpstreamError(collect(provider().chat!('gpt-4o-mini').doStream(hello, ctx)), 'bad_response');
  });

  it('fails when the host reports an error in the middle of the stream', async () => {
    upstream.on(route, { sse: [textChunks[1], { error: { message: 'The server had an error while processing your request.', type: 'server_error' } }] });

    const error = await expectUpstreamError(collect(provider().chat!('gpt-4o-mini').doStream(hello, ctx)), 'server_error');

    expect(error.message).to.include('The server had an error while processing your request.');
  });

  it('fails as network when the stream is cut off before any finish', async () => {
    upstream.on(route, { sse: textChunks.slice(0, 3) });

    await expectUpstreamError(collect(provider().chat!('gpt-4o-mini').doStream(hello, ctx)), 'network');
  });

  it('times out when the host does not answer within ctx.timeoutMs', async () => {
    upstream.on(route, { hang: true });
    const started = Date.now();

    await expectUpstreamError(collect(provider().chat!('gpt-4o-mini').doStream(hello, { ...ctx, timeoutMs: 200 })), 'timeout');

    expect(Date.now() - started).to.be.lessThan(5000);
  });

  it('fails with not_configured from the first next() when there is no API key', async () => {
    const iterator = provider({ apiKey: undefined }).chat!('gpt-4o-mini').doStream(hello, ctx)[Symbol.asyncIterator]();

    await expectUpstreamError(iterator.next(), 'not_configured');
    expect(upstream.requests).to.have.length(0);
  });

  describe('cancellation', () => {
    // A host of its own, because the test must see the upstream connection close.
    let server: http.Server;
    let upstreamClosed: Promise<void>;
    let baseUrl: string;

    before(async () => {
      let markClosed = () => {};
      upstreamClosed = new Promise((resolve) => { markClosed = resolve; });
      server = http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(textChunks[1])}\n\n`);
        const ticker = setInterval(() => res.write(`data: ${JSON.stringify(textChunks[2])}\n\n`), 50);
        res.on('close', () => { clearInterval(ticker); markClosed(); });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });

    after(async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it('aborting ctx.signal ends the stream and closes the upstream connection', async () => {
      const controller = new AbortController();
      const chat = createOpenAICompatibleProvider({ id: 'openai', baseUrl, apiKey: API_KEY }).chat!('gpt-4o-mini');
      const iterator = chat.doStream(hello, { ...ctx, signal: controller.signal })[Symbol.asyncIterator]();

      expect(await iterator.next()).to.deep.equal({ done: false, value: { type: 'text-delta', delta: 'Hello' } });
      controller.abort();
      const error = await expectUpstreamError((async () => { for (;;) if ((await iterator.next()).done) return; })(), 'network');

      expect(error.code).to.equal('upstream_cancelled');
      await upstreamClosed;
    });
  });
});
