import { expect } from 'chai';
import type { ChatRequest } from '../../../providers/types';
import completion from './fixtures/chat-completion.json';
import jsonCompletion from './fixtures/chat-completion-json.json';
import toolCallCompletion from './fixtures/chat-completion-tool-calls.json';
import visionCompletion from './fixtures/chat-completion-vision.json';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('openai-compatible chat (doGenerate)', () => {
  const { upstream, provider } = useFakeOpenAI();
  const route = 'POST /v1/chat/completions';

  it('translates every request field to the wire format and maps the answer', async () => {
    upstream.on(route, { json: completion });
    const req: ChatRequest = {
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello!', name: 'ann' }],
      maxTokens: 64,
      temperature: 0.2,
      topP: 0.9,
      stop: ['\n\n'],
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.3,
      user: 'ws_1',
    };

    const result = await provider().chat!('gpt-4.1').doGenerate(req, ctx);

    expect(result).to.deep.equal({
      content: 'Hello! How can I assist you today?',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 19, outputTokens: 10 },
      upstreamId: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
    });
    const [sent] = upstream.received(route);
    expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
    expect(sent.headers['content-type']).to.equal('application/json');
    expect(sent.json).to.deep.equal({
      model: 'gpt-4.1',
      messages: req.messages,
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['\n\n'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.3,
      user: 'ws_1',
    });
  });

  it('sends max_completion_tokens instead of max_tokens for the models the option names', async () => {
    upstream.on(route, { json: completion });
    const openai = provider({ useMaxCompletionTokens: (model) => /^o\d/.test(model) });

    await openai.chat!('o4-mini').doGenerate({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 100 }, ctx);
    await openai.chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 100 }, ctx);

    const [reasoning, classic] = upstream.received(route);
    expect(reasoning.json).to.include({ max_completion_tokens: 100 }).and.not.have.property('max_tokens');
    expect(classic.json).to.include({ max_tokens: 100 }).and.not.have.property('max_completion_tokens');
  });

  it('passes tools through and returns the tool calls the model made', async () => {
    upstream.on(route, { json: toolCallCompletion });
    const tools = [{
      type: 'function' as const,
      function: { name: 'get_current_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
    }];
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'Weather in Boston and Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_current_weather', arguments: '{"location":"Rome"}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: '21C' },
    ];

    const result = await provider().chat!('gpt-4o-mini').doGenerate({ messages, tools, toolChoice: 'auto', parallelToolCalls: true }, ctx);

    expect(result.content).to.equal(null);
    expect(result.finishReason).to.equal('tool_calls');
    expect(result.toolCalls).to.deep.equal([
      { id: 'call_abc123', type: 'function', function: { name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}' } },
      { id: 'call_def456', type: 'function', function: { name: 'get_current_weather', arguments: '{\n"location": "Paris, France"\n}' } },
    ]);
    expect(result.usage).to.deep.equal({ inputTokens: 82, outputTokens: 17 });
    expect(upstream.received(route)[0].json).to.deep.equal({ model: 'gpt-4o-mini', messages, tools, tool_choice: 'auto', parallel_tool_calls: true });
  });

  it('leaves parallel_tool_calls out when there are no tools, since OpenAI refuses it alone', async () => {
    upstream.on(route, { json: completion });

    await provider().chat!('gpt-4o-mini').doGenerate({ messages: [{ role: 'user', content: 'Hi' }], parallelToolCalls: false, toolChoice: 'none' }, ctx);

    expect(upstream.received(route)[0].json).to.deep.equal({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], tool_choice: 'none' });
  });

  it('passes JSON mode and structured output formats through unchanged', async () => {
    upstream.on(route, { json: jsonCompletion });
    const responseFormat = {
      type: 'json_schema' as const,
      json_schema: { name: 'city', strict: true, schema: { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } } } },
    };

    const structured = await provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'Largest city in France?' }], responseFormat }, ctx);
    await provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'JSON please' }], responseFormat: { type: 'json_object' } }, ctx);

    expect(JSON.parse(structured.content!)).to.deep.equal({ city: 'Paris', population: 2102650 });
    const [first, second] = upstream.received(route);
    expect(first.json.response_format).to.deep.equal(responseFormat);
    expect(second.json.response_format).to.deep.equal({ type: 'json_object' });
  });

  it('passes image content parts through for vision models and maps a length stop', async () => {
    upstream.on(route, { json: visionCompletion });
    const messages: ChatRequest['messages'] = [{
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this image?' },
        { type: 'image_url', image_url: { url: 'https://example.com/boardwalk.jpg', detail: 'low' } },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    }];

    const result = await provider().chat!('gpt-4o-mini').doGenerate({ messages, maxTokens: 16 }, ctx);

    expect(result.content).to.equal('A wooden boardwalk through a green meadow under a blue sky.');
    expect(result.finishReason).to.equal('length');
    expect(upstream.received(route)[0].json.messages).to.deep.equal(messages);
  });

  it('maps finish reasons outside the closed set to other, and a missing usage to zeros', async () => {
    upstream.on(route, { json: { id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'something_new' }] } });

    const result = await provider().chat!('m').doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx);

    expect(result.finishReason).to.equal('other');
    expect(result.usage).to.deep.equal({ inputTokens: 0, outputTokens: 0 });
  });

  it('carries n, logprobs, logit_bias, reasoning_effort and verbosity, and returns every choice with its log probabilities', async () => {
    const token = (t: string, logprob: number) => ({ token: t, logprob, bytes: [...Buffer.from(t)], top_logprobs: [{ token: t, logprob, bytes: [...Buffer.from(t)] }] });
    upstream.on(route, {
      json: {
        id: 'chatcmpl-n', object: 'chat.completion', created: 1, model: 'gpt-5',
        // Listed out of order: the choices come back by index.
        choices: [
          { index: 1, message: { role: 'assistant', content: 'Hey' }, logprobs: { content: [token('Hey', -0.4)], refusal: null }, finish_reason: 'length' },
          { index: 0, message: { role: 'assistant', content: 'Hi' }, logprobs: { content: [token('Hi', -0.1)], refusal: null }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      },
    });
    const chat = provider({ nativeChoices: true }).chat!('gpt-5');
    expect(chat.nativeChoices).to.equal(true);

    const result = await chat.doGenerate({
      messages: [{ role: 'user', content: 'Hi' }], n: 2, logprobs: true, topLogprobs: 1, logitBias: { '50256': -100 }, reasoningEffort: 'minimal', verbosity: 'low',
    }, ctx);

    expect(upstream.received(route)[0].json).to.deep.equal({
      model: 'gpt-5', messages: [{ role: 'user', content: 'Hi' }], n: 2, logprobs: true, top_logprobs: 1, logit_bias: { '50256': -100 }, reasoning_effort: 'minimal', verbosity: 'low',
    });
    expect(result).to.deep.equal({
      content: 'Hi', toolCalls: [], finishReason: 'stop', logprobs: { content: [token('Hi', -0.1)] },
      usage: { inputTokens: 5, outputTokens: 2 }, upstreamId: 'chatcmpl-n',
      moreChoices: [{ content: 'Hey', toolCalls: [], finishReason: 'length', logprobs: { content: [token('Hey', -0.4)] } }],
    });
  });

  it('is not a host of several choices per call unless its options say so', () => {
    expect(provider().chat!('llama-3.3-70b').nativeChoices).to.equal(false);
    expect(provider({ nativeChoices: (model) => model.startsWith('gpt') }).chat!('gpt-4o').nativeChoices).to.equal(true);
  });

  it('classifies a body without choices, or with a malformed tool call, as bad_response', async () => {
    upstream.sequence(route, [
      { json: { id: 'x', object: 'chat.completion', choices: [] } },
      { json: { id: 'x', choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { arguments: '{}' } }] }, finish_reason: 'tool_calls' }] } },
      { json: { id: 'x', choices: [{ message: { role: 'assistant', content: 42 }, finish_reason: 'stop' }] } },
    ]);
    const chat = provider().chat!('gpt-4o');

    for (let i = 0; i < 3; i += 1) {
      await expectUpstreamError(chat.doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx), 'bad_response');
    }
  });
});
