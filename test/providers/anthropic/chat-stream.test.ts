import { expect } from 'chai';
import { createAnthropicProvider } from '../../../providers/anthropic';
import { FakeUpstream } from '../../support/fake-upstream';
import streamJsonTool from './fixtures/stream-json-tool.json';
import streamOverloaded from './fixtures/stream-overloaded.json';
import streamText from './fixtures/stream-text.json';
import streamToolUse from './fixtures/stream-tool-use.json';
import { collect, ctx, upstreamFailure } from './support';

describe('anthropic chat adapter (doStream)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat() {
    return createAnthropicProvider({ id: 'anthropic', baseUrl, apiKey: 'sk-ant-test' }).chat!('claude-haiku-4-5');
  }

  it('streams text deltas and one finish with usage from message_start and message_delta', async () => {
    upstream.on('POST /v1/messages', { sse: streamText });

    const parts = await collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 50 }, ctx));

    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: ', world!' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 25, outputTokens: 15 } },
    ]);
    const [sent] = upstream.received('POST /v1/messages');
    expect(sent.headers['x-api-key']).to.equal('sk-ant-test');
    expect(sent.headers['anthropic-version']).to.equal('2023-06-01');
    expect(sent.json).to.deep.equal({
      model: 'claude-haiku-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
    });
  });

  it('streams tool calls numbered among tool blocks, with arguments as JSON fragments', async () => {
    upstream.on('POST /v1/messages', { sse: streamToolUse });

    const parts = await collect(chat().doStream({
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'get_time' } }],
    }, ctx));

    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Let me check.' },
      { type: 'tool-call-delta', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"location": "San Fra' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'ncisco, CA"}' },
      { type: 'tool-call-delta', index: 1, id: 'toolu_01Nq2ZxQ3dFh7nPSQr1aGb9k', name: 'get_time', argumentsDelta: '' },
      // a tool without parameters still ends with valid JSON arguments
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 472, outputTokens: 89 } },
    ]);
    expect(upstream.received('POST /v1/messages')[0].json.tools.map((t: { name: string }) => t.name)).to.deep.equal(['get_weather', 'get_time']);
  });

  it('streams the JSON-mode answer as text and finishes with stop', async () => {
    upstream.on('POST /v1/messages', { sse: streamJsonTool });

    const parts = await collect(chat().doStream({ messages: [{ role: 'user', content: 'City?' }], responseFormat: { type: 'json_object' } }, ctx));

    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: '{"city": ' },
      { type: 'text-delta', delta: '"Paris"}' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 300, outputTokens: 20 } },
    ]);
    expect(upstream.received('POST /v1/messages')[0].json.tool_choice).to.deep.equal({ type: 'tool', name: 'json_response' });
  });

  it('throws a retryable server_error when an error event arrives mid-stream', async () => {
    upstream.on('POST /v1/messages', { sse: streamOverloaded });
    const received: unknown[] = [];

    const error = await upstreamFailure((async () => {
      for await (const part of chat().doStream({ messages: [{ role: 'user', content: 'Story' }] }, ctx)) received.push(part);
    })());

    expect(received).to.deep.equal([{ type: 'text-delta', delta: 'Once upon' }]);
    expect(error.kind).to.equal('server_error');
    expect(error.retryable).to.equal(true);
    expect(error.upstreamStatus).to.equal(529);
    expect(error.message).to.contain('Overloaded');
  });

  it('treats a stream that ends before message_stop as a bad response', async () => {
    upstream.on('POST /v1/messages', { sse: streamText.slice(0, 4) });
    const error = await upstreamFailure(collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)));
    expect(error.kind).to.equal('bad_response');
  });

  it('treats an event that is not JSON as a bad response', async () => {
    upstream.on('POST /v1/messages', { sse: [streamText[0], { event: 'content_block_delta', data: '{not json' }] });
    const error = await upstreamFailure(collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)));
    expect(error.kind).to.equal('bad_response');
  });

  it('throws a failure before the first part from the first next()', async () => {
    upstream.on('POST /v1/messages', { status: 429, headers: { 'retry-after': '3' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } } });
    const iterator = chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)[Symbol.asyncIterator]();
    const error = await upstreamFailure(iterator.next());
    expect(error.kind).to.equal('rate_limited');
    expect(error.retryAfterMs).to.equal(3000);
  });

  it('times out when the upstream sends no headers within the attempt deadline', async () => {
    upstream.on('POST /v1/messages', { hang: true });
    const error = await upstreamFailure(collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, { requestId: 'r', timeoutMs: 150 })));
    expect(error.kind).to.equal('timeout');
  });
});
