import { expect } from 'chai';
import { generateChoices, streamChoices } from '../../../endpoints/chat/choices';
import { createAnthropicProvider } from '../../../providers/anthropic';
import type { ChatStreamPart } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import message from '../../providers/anthropic/fixtures/message-text.json';
import streamText from '../../providers/anthropic/fixtures/stream-text.json';

/** A host that answers one choice per call (Anthropic): the gateway makes n calls. */
describe('endpoints/chat/choices: n choices from a host without n', () => {
  const upstream = new FakeUpstream();
  const route = 'POST /v1/messages';
  before(() => upstream.start());
  after(() => upstream.stop());
  afterEach(() => upstream.reset());
  const chat = () => createAnthropicProvider({ id: 'anthropic', baseUrl: upstream.url, apiKey: 'k' }).chat!('claude-sonnet-4-5');
  const hi = { messages: [{ role: 'user' as const, content: 'Hi' }] };

  it('makes one call per choice, none of them asking for n, and sums their usage', async () => {
    upstream.on(route, { json: message });

    const result = await generateChoices(chat(), { ...hi, n: 5 }, 3, { requestId: 'r' });

    const sent = upstream.received(route);
    expect(sent).to.have.length(3);
    for (const request of sent) expect(request.json).to.not.have.property('n');
    expect(result.content).to.equal('Hello! How can I help you today?');
    expect(result.moreChoices).to.deep.equal([
      { content: 'Hello! How can I help you today?', toolCalls: [], finishReason: 'stop' },
      { content: 'Hello! How can I help you today?', toolCalls: [], finishReason: 'stop' },
    ]);
    expect(result.usage).to.deep.equal({ inputTokens: 36, outputTokens: 27 });
  });

  it('makes a single call for one choice', async () => {
    upstream.on(route, { json: message });
    const result = await generateChoices(chat(), hi, 1, { requestId: 'r' });
    expect(upstream.received(route)).to.have.length(1);
    expect(result).to.not.have.property('moreChoices');
  });

  it('streams the choices one after the other, each part naming its choice, and ends with one finish', async () => {
    upstream.on(route, { sse: streamText });
    const parts: ChatStreamPart[] = [];
    for await (const part of streamChoices(chat(), hi, 2, { requestId: 'r' })) parts.push(part);

    expect(upstream.received(route)).to.have.length(2);
    const finishes = parts.filter((p) => p.type === 'finish');
    expect(finishes).to.have.length(1);
    const single: ChatStreamPart[] = [];
    for await (const part of streamChoices(chat(), hi, 1, { requestId: 'r' })) single.push(part);
    const text = (choice: number) => parts.filter((p) => p.type === 'text-delta' && p.choice === choice).map((p) => (p as { delta: string }).delta).join('');
    const singleText = single.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta).join('');
    expect(text(0)).to.equal(singleText);
    expect(text(1)).to.equal(singleText);
    const last = single.at(-1) as Extract<ChatStreamPart, { type: 'finish' }>;
    expect(finishes[0]).to.deep.equal({
      type: 'finish', finishReason: last.finishReason, finishReasons: [last.finishReason, last.finishReason],
      usage: { inputTokens: last.usage.inputTokens * 2, outputTokens: last.usage.outputTokens * 2 },
    });
  });
});
