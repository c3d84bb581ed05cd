import { expect } from 'chai';
import { createGoogleProvider } from '../../../providers/google';
import type { ChatStreamPart } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import blocked from './fixtures/generate-blocked.json';
import streamFunctionCall from './fixtures/stream-function-call.json';
import streamText from './fixtures/stream-text.json';
import { collect, ctx, upstreamFailure } from './support';

const STREAM = 'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent';

describe('google chat adapter (doStream)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat() {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).chat!('gemini-2.5-flash');
  }

  it('streams text deltas then one finish with the last usage', async () => {
    upstream.on(STREAM, { sse: streamText });

    const parts = await collect(chat().doStream({ messages: [{ role: 'user', content: 'A story' }], temperature: 1 }, ctx));

    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Once upon' },
      { type: 'text-delta', delta: ' a time.' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 9, outputTokens: 8 } },
    ]);
    const [sent] = upstream.received(STREAM);
    expect(sent.query.get('alt')).to.equal('sse');
    expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
    expect(sent.json).to.deep.equal({
      contents: [{ role: 'user', parts: [{ text: 'A story' }] }],
      generationConfig: { temperature: 1 },
    });
  });

  it('streams each function call whole with a generated id, and finishes with tool_calls', async () => {
    upstream.on(STREAM, { sse: streamFunctionCall });

    const parts = await collect(chat().doStream({
      messages: [{ role: 'user', content: 'Weather and time?' }],
      tools: [{ type: 'function', function: { name: 'get_weather' } }, { type: 'function', function: { name: 'get_time' } }],
    }, ctx));

    const calls = parts.filter((p): p is Extract<ChatStreamPart, { type: 'tool-call-delta' }> => p.type === 'tool-call-delta');
    expect(calls.map(({ index, name, argumentsDelta }) => ({ index, name, argumentsDelta }))).to.deep.equal([
      { index: 0, name: 'get_weather', argumentsDelta: '{"location":"Paris"}' },
      { index: 1, name: 'get_time', argumentsDelta: '{"zone":"CET"}' },
    ]);
    expect(calls[0].id).to.match(/^call_[0-9a-f]{24}$/);
    expect(calls[0].id).to.not.equal(calls[1].id);
    expect(parts[parts.length - 1]).to.deep.equal({ type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 60, outputTokens: 14 } });
  });

  it('finishes with content_filter when the prompt is blocked', async () => {
    upstream.on(STREAM, { sse: [blocked] });
    expect(await collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx))).to.deep.equal([
      { type: 'finish', finishReason: 'content_filter', usage: { inputTokens: 7, outputTokens: 0 } },
    ]);
  });

  it('throws when an error chunk arrives mid-stream', async () => {
    upstream.on(STREAM, { sse: [streamText[0], { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }] });
    const received: ChatStreamPart[] = [];
    const error = await upstreamFailure((async () => {
      for await (const part of chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)) received.push(part);
    })());
    expect(received).to.deep.equal([{ type: 'text-delta', delta: 'Once upon' }]);
    expect(error.kind).to.equal('server_error');
    expect(error.retryable).to.equal(true);
    expect(error.message).to.contain('overloaded');
  });

  it('treats a stream without a finish reason, or with a chunk that is not JSON, as a bad response', async () => {
    upstream.on(STREAM, { sse: streamText.slice(0, 2) });
    expect((await upstreamFailure(collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)))).kind).to.equal('bad_response');

    upstream.reset();
    upstream.on(STREAM, { sse: ['{"candidates": ['] });
    expect((await upstreamFailure(collect(chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)))).kind).to.equal('bad_response');
  });

  it('throws a failure before the first part from the first next()', async () => {
    upstream.on(STREAM, { status: 429, headers: { 'retry-after': '2' }, json: { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } } });
    const iterator = chat().doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)[Symbol.asyncIterator]();
    const error = await upstreamFailure(iterator.next());
    expect(error.kind).to.equal('rate_limited');
    expect(error.retryAfterMs).to.equal(2000);
    expect(upstream.received(STREAM)[0].headers['x-goog-api-key']).to.equal('AIza-test');
  });
});
