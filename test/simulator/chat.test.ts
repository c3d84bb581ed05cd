import { expect } from 'chai';
import type { ChatRequest, ChatStreamPart } from '../../providers/types';
import { collect, ctx, simulated, upstreamFailure } from './support';

const hello: ChatRequest = { messages: [{ role: 'user', content: 'Tell me about the weather in Paris today.' }] };

describe('simulated provider: chat', () => {
  const chat = simulated().chat!('sim-chat');

  it('answers deterministically, echoing the last user message', async () => {
    const a = await chat.doGenerate(hello, ctx());
    const b = await chat.doGenerate(hello, ctx());
    expect(a).to.deep.equal(b);
    expect(a.content).to.include('Tell me about the weather in Paris today.');
    expect(a.finishReason).to.equal('stop');
    expect(a.toolCalls).to.deep.equal([]);
    expect(a.upstreamId).to.match(/^simchatcmpl-/);
    const other = await chat.doGenerate({ messages: [{ role: 'user', content: 'Something else' }] }, ctx());
    expect(other.content).to.not.equal(a.content);
  });

  it('counts usage at about four characters per token, rounded up', async () => {
    const result = await chat.doGenerate(hello, ctx());
    expect(result.usage.inputTokens).to.equal(Math.ceil('Tell me about the weather in Paris today.'.length / 4));
    expect(result.usage.outputTokens).to.equal(Math.ceil(result.content!.length / 4));
  });

  it('stops at max tokens with finish reason length', async () => {
    const result = await chat.doGenerate({ ...hello, maxTokens: 5 }, ctx());
    expect(result.finishReason).to.equal('length');
    expect(result.content!.length).to.equal(20);
    expect(result.usage.outputTokens).to.equal(5);
  });

  it('answers n different choices in one call, usage covering them all', async () => {
    expect(chat.nativeChoices).to.equal(true);
    const one = await chat.doGenerate(hello, ctx());
    const three = await chat.doGenerate({ ...hello, n: 3 }, ctx());
    expect(three.content).to.equal(one.content);
    expect(three.moreChoices).to.have.length(2);
    const texts = [three.content, ...three.moreChoices!.map((c) => c.content)];
    expect(new Set(texts).size).to.equal(3);
    expect(three.usage.inputTokens).to.equal(one.usage.inputTokens);
    expect(three.usage.outputTokens).to.equal(texts.reduce((sum, t) => sum + Math.ceil(t!.length / 4), 0));
  });

  it('gives log probabilities token by token, the answer\'s token first among top_logprobs alternatives', async () => {
    const result = await chat.doGenerate({ ...hello, logprobs: true, topLogprobs: 3 }, ctx());
    const tokens = result.logprobs!.content!;
    expect(tokens.map((t) => t.token).join('')).to.equal(result.content);
    expect(tokens).to.have.length(result.usage.outputTokens);
    for (const t of tokens) {
      expect(t.logprob).to.be.at.most(0);
      expect(t.bytes).to.deep.equal([...Buffer.from(t.token)]);
      expect(t.top_logprobs).to.have.length(3);
      expect(t.top_logprobs[0]).to.deep.equal({ token: t.token, logprob: t.logprob, bytes: t.bytes });
      expect(t.top_logprobs[1].logprob).to.be.below(t.logprob);
    }
    expect((await chat.doGenerate(hello, ctx()))).to.not.have.property('logprobs');
  });

  it('streams each choice in turn with its index, text deltas carrying their tokens\' log probabilities', async () => {
    const parts = await collect(chat.doStream({ ...hello, n: 2, logprobs: true }, ctx()));
    const texts = ['', ''];
    for (const part of parts) {
      if (part.type !== 'text-delta') continue;
      texts[part.choice ?? 0] += part.delta;
      expect(part.logprobs!.map((t) => t.token).join('')).to.equal(part.delta);
    }
    const whole = await chat.doGenerate({ ...hello, n: 2 }, ctx());
    expect(texts).to.deep.equal([whole.content, whole.moreChoices![0].content]);
    expect(parts.at(-1)).to.deep.equal({ type: 'finish', finishReason: 'stop', usage: whole.usage, finishReasons: ['stop', 'stop'] });
  });

  it('cuts the answer at a stop sequence', async () => {
    const result = await chat.doGenerate({ ...hello, stop: ['Paris'] }, ctx());
    expect(result.content).to.not.include('Paris');
    expect(result.finishReason).to.equal('stop');
  });

  it('answers shorter on the mini model', async () => {
    const mini = await simulated().chat!('sim-chat-mini').doGenerate(hello, ctx());
    const full = await chat.doGenerate(hello, ctx());
    expect(mini.content!.length).to.be.lessThan(full.content!.length);
  });

  it('streams the same answer in several text deltas, then one finish part', async () => {
    const parts = await collect(chat.doStream(hello, ctx()));
    const deltas = parts.filter((p): p is Extract<ChatStreamPart, { type: 'text-delta' }> => p.type === 'text-delta');
    expect(deltas.length).to.be.greaterThan(2);
    const whole = await chat.doGenerate(hello, ctx());
    expect(deltas.map((d) => d.delta).join('')).to.equal(whole.content);
    expect(parts[parts.length - 1]).to.deep.equal({ type: 'finish', finishReason: 'stop', usage: whole.usage });
    expect(parts.filter((p) => p.type === 'finish')).to.have.length(1);
  });

  it('waits between deltas (configurable)', async () => {
    const slowStream = simulated({ streamDelayMs: 30 }).chat!('sim-chat');
    const started = Date.now();
    const parts = await collect(slowStream.doStream(hello, ctx()));
    expect(Date.now() - started).to.be.at.least(30 * (parts.length - 1) - 5);
  });

  describe('tools', () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'days', 'unit'] } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } },
    ];

    it('calls the first tool with arguments that satisfy its schema', async () => {
      const result = await chat.doGenerate({ ...hello, tools }, ctx());
      expect(result.finishReason).to.equal('tool_calls');
      expect(result.content).to.equal(null);
      expect(result.toolCalls).to.have.length(1);
      const [call] = result.toolCalls;
      expect(call.id).to.match(/^call_/);
      expect(call.function.name).to.equal('get_weather');
      const args = JSON.parse(call.function.arguments);
      expect(args).to.have.all.keys('city', 'days', 'unit');
      expect(args.city).to.be.a('string').and.not.empty;
      expect(args.days).to.equal(1);
      expect(args.unit).to.equal('celsius');
    });

    it('calls the tool that tool_choice forces, and none when it says none', async () => {
      const forced = await chat.doGenerate({ ...hello, tools, toolChoice: { type: 'function', function: { name: 'get_time' } } }, ctx());
      expect(forced.toolCalls[0].function.name).to.equal('get_time');
      const none = await chat.doGenerate({ ...hello, tools, toolChoice: 'none' }, ctx());
      expect(none.toolCalls).to.deep.equal([]);
      expect(none.content).to.be.a('string');
    });

    it('answers in text once the last message is a tool result', async () => {
      const result = await chat.doGenerate({
        tools,
        messages: [
          hello.messages[0],
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21}' },
        ],
      }, ctx());
      expect(result.finishReason).to.equal('stop');
      expect(result.content).to.include('get_weather').and.include('{"temperature":21}');
    });

    it('streams a tool call as deltas that join into the same arguments', async () => {
      const parts = await collect(chat.doStream({ ...hello, tools }, ctx()));
      const deltas = parts.filter((p): p is Extract<ChatStreamPart, { type: 'tool-call-delta' }> => p.type === 'tool-call-delta');
      expect(deltas[0]).to.include({ index: 0, name: 'get_weather' });
      expect(deltas[0].id).to.match(/^call_/);
      const whole = await chat.doGenerate({ ...hello, tools }, ctx());
      expect(deltas.map((d) => d.argumentsDelta).join('')).to.equal(whole.toolCalls[0].function.arguments);
      expect(parts[parts.length - 1]).to.include({ type: 'finish', finishReason: 'tool_calls' });
    });

    it('refuses a forced tool that was not provided', async () => {
      const err = await upstreamFailure(() => chat.doGenerate({ ...hello, tools, toolChoice: { type: 'function', function: { name: 'nope' } } }, ctx()));
      expect(err.kind).to.equal('caller_error');
    });
  });

  describe('JSON mode', () => {
    it('returns a JSON object for json_object', async () => {
      const result = await chat.doGenerate({ ...hello, responseFormat: { type: 'json_object' } }, ctx());
      expect(JSON.parse(result.content!)).to.be.an('object').that.has.property('answer');
    });

    it("returns an object with the schema's required keys for json_schema", async () => {
      const schema = { type: 'object', properties: { title: { type: 'string' }, score: { type: 'number', minimum: 0, maximum: 10 }, tags: { type: 'array', items: { type: 'string' }, minItems: 2 } }, required: ['title', 'score', 'tags'], additionalProperties: false };
      const result = await chat.doGenerate({ ...hello, responseFormat: { type: 'json_schema', json_schema: { name: 'review', schema, strict: true } } }, ctx());
      const parsed = JSON.parse(result.content!);
      expect(parsed).to.have.all.keys('title', 'score', 'tags');
      expect(parsed.score).to.be.within(0, 10);
      expect(parsed.tags).to.have.length(2);
    });
  });

  describe('multimodal input', () => {
    const tinyPng = Buffer.from('89504e470d0a1a0a0000000d4948445200000020000000100806000000', 'hex');

    it('acknowledges images', async () => {
      const result = await chat.doGenerate({ messages: [{ role: 'user', content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${tinyPng.toString('base64')}` } },
        { type: 'image_url', image_url: { url: 'https://images.example.com/cat.jpg' } },
      ] }] }, ctx());
      expect(result.content).to.include('I see 2 images').and.include('32x16 PNG').and.include('images.example.com');
      expect(result.usage.inputTokens).to.equal(Math.ceil('What is in this picture?'.length / 4) + 2 * 85);
    });

    it('refuses input_audio on models without audio input, as an upstream would', async () => {
      const err = await upstreamFailure(() => chat.doGenerate({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, ctx()));
      expect(err.kind).to.equal('caller_error');
      expect(err.status).to.equal(400);
    });

    it('hears input_audio on sim-chat-audio (recovering what our speech model said)', async () => {
      const provider = simulated();
      const speech = await provider.speech!('sim-tts').doSynthesize({ input: 'Open the pod bay doors', voice: 'alloy', format: 'wav', speed: 1 }, ctx());
      const result = await provider.chat!('sim-chat-audio').doGenerate({ messages: [{ role: 'user', content: [
        { type: 'text', text: 'What did I say?' },
        { type: 'input_audio', input_audio: { data: speech.audio.toString('base64'), format: 'wav' } },
      ] }] }, ctx());
      expect(result.content).to.include('Open the pod bay doors');
      expect(result.usage.inputTokens).to.be.greaterThan(Math.ceil('What did I say?'.length / 4));
    });
  });

  describe('sim:call, tool results this turn, and reasoning', () => {
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'first', parameters: { type: 'object', properties: { a: { type: 'string' } } } } },
      { type: 'function', function: { name: 'Read', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } } },
    ];

    it('calls the tool the user names, with the arguments given; an unknown tool is refused', async () => {
      const result = await chat.doGenerate({ tools, messages: [{ role: 'user', content: 'sim:call Read {"file_path": "/tmp/x"}' }, { role: 'system', content: 'later instructions' }] }, ctx());
      expect(result.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).to.deep.equal([['Read', { file_path: '/tmp/x' }]]);
      const error = await upstreamFailure(() => chat.doGenerate({ tools, messages: [{ role: 'user', content: 'sim:call Nope {}' }] }, ctx()));
      expect(error.message).to.include("Tool 'Nope' is not one of the provided tools");
    });

    it('answers from the tool result when one came back this turn, even with the user\'s text after it', async () => {
      const call = { id: 'call_1', type: 'function' as const, function: { name: 'Read', arguments: '{"file_path":"/tmp/x"}' } };
      const result = await chat.doGenerate({
        tools, messages: [
          { role: 'user', content: 'sim:call Read {"file_path": "/tmp/x"}' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
          { role: 'user', content: 'a reminder' },
        ],
      }, ctx());
      expect(result.toolCalls).to.deep.equal([]);
      expect(result.content).to.include('Based on Read, which returned "file text"');
    });

    it('sim-reasoner reasons first when asked, signed, streamed before the answer', async () => {
      const reasoner = simulated().chat!('sim-reasoner');
      expect((await reasoner.doGenerate(hello, ctx())).reasoning).to.equal(undefined);
      const result = await reasoner.doGenerate({ ...hello, reasoningEffort: 'high' }, ctx());
      expect(result.reasoning).to.have.length(1);
      expect(result.reasoning![0].text).to.include('Simulated reasoning at high effort');
      expect(result.reasoning![0].signature).to.match(/^[A-Za-z0-9+/=]+$/);
      const parts = await collect(reasoner.doStream({ ...hello, reasoningEffort: 'high' }, ctx()));
      const reasoning = parts.filter((p): p is Extract<ChatStreamPart, { type: 'reasoning-delta' }> => p.type === 'reasoning-delta');
      expect(reasoning.map((p) => p.delta).join('')).to.equal(result.reasoning![0].text);
      expect(reasoning[reasoning.length - 1].signature).to.equal(result.reasoning![0].signature);
      expect(parts.findIndex((p) => p.type === 'text-delta')).to.be.greaterThan(parts.findIndex((p) => p.type === 'reasoning-delta' && p.signature !== undefined));
    });
  });
});
