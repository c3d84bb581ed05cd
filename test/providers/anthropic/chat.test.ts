import { expect } from 'chai';
import { InvalidRequestError } from '../../../core/errors';
import { createAnthropicProvider } from '../../../providers/anthropic';
import type { ChatRequest } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import jsonToolAnswer from './fixtures/message-json-tool.json';
import textAnswer from './fixtures/message-text.json';
import toolUseAnswer from './fixtures/message-tool-use.json';
import { ctx } from './support';

const MODEL = 'claude-sonnet-4-5-20250929';
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('anthropic chat adapter (doGenerate)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat() {
    return createAnthropicProvider({ id: 'anthropic', baseUrl, apiKey: 'sk-ant-test' }).chat!(MODEL);
  }

  async function sentBody(req: ChatRequest, answer: unknown = textAnswer) {
    upstream.on('POST /v1/messages', { json: answer });
    await chat().doGenerate(req, ctx);
    const [sent] = upstream.received('POST /v1/messages');
    return sent.json;
  }

  it('sends a Messages request with the key and version headers and reads the answer', async () => {
    upstream.on('POST /v1/messages', { json: textAnswer });

    const result = await chat().doGenerate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.2,
      topP: 0.9,
      stop: ['END'],
      user: 'user-42',
    }, ctx);

    expect(result).to.deep.equal({
      content: 'Hello! How can I help you today?',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 9 },
      upstreamId: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    });
    const [sent] = upstream.received('POST /v1/messages');
    expect(sent.headers['x-api-key']).to.equal('sk-ant-test');
    expect(sent.headers['anthropic-version']).to.equal('2023-06-01');
    expect(sent.headers['content-type']).to.equal('application/json');
    expect(sent.headers.authorization).to.equal(undefined);
    expect(sent.json).to.deep.equal({
      model: MODEL,
      max_tokens: 4096,
      system: 'Be brief.\n\nAnswer in English.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
    });
  });

  it('uses the caller max_tokens, or the default configured for the host', async () => {
    expect((await sentBody({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 100 })).max_tokens).to.equal(100);

    upstream.reset();
    upstream.on('POST /v1/messages', { json: textAnswer });
    await createAnthropicProvider({ id: 'anthropic', baseUrl: `${baseUrl}/v1/`, apiKey: 'k', defaultMaxTokens: 1024 }).chat!(MODEL)
      .doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx);
    expect(upstream.received('POST /v1/messages')[0].json.max_tokens).to.equal(1024);
  });

  it('merges consecutive turns of one role so user and assistant alternate', async () => {
    const body = await sentBody({
      messages: [
        { role: 'user', content: 'First.' },
        { role: 'user', content: [{ type: 'text', text: 'Second.' }] },
        { role: 'assistant', content: 'Reply one.' },
        { role: 'assistant', content: 'Reply two.' },
        { role: 'user', content: 'Third.' },
      ],
    });
    expect(body.messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'First.' }, { type: 'text', text: 'Second.' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Reply one.' }, { type: 'text', text: 'Reply two.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Third.' }] },
    ]);
  });

  it('translates images: data URLs to base64 blocks, http URLs to url sources', async () => {
    const body = await sentBody({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these.' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
        ],
      }],
    });
    expect(body.messages[0].content).to.deep.equal([
      { type: 'text', text: 'Compare these.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  it('sends inline PDF files as document blocks', async () => {
    const body = await sentBody({
      messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }],
    });
    expect(body.messages[0].content).to.deep.equal([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    ]);
  });

  it('refuses audio input without calling upstream', async () => {
    upstream.on('POST /v1/messages', { json: textAnswer });
    const error = await chat().doGenerate({
      messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
    }, ctx).catch((err) => err);
    expect(error).to.be.instanceOf(InvalidRequestError);
    expect(error.code).to.equal('audio_not_supported_by_model');
    expect(upstream.requests).to.have.length(0);
  });

  it('sends tools with input_schema and maps tool_choice', async () => {
    const tools: ChatRequest['tools'] = [{
      type: 'function',
      function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
    }];
    const messages: ChatRequest['messages'] = [{ role: 'user', content: 'Weather in Paris?' }];

    const body = await sentBody({ messages, tools, toolChoice: 'auto' });
    expect(body.tools).to.deep.equal([{
      name: 'get_weather',
      description: 'Weather for a city',
      input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
    }]);
    expect(body.tool_choice).to.deep.equal({ type: 'auto' });

    const choices: Array<[ChatRequest['toolChoice'], boolean | undefined, unknown]> = [
      ['required', undefined, { type: 'any' }],
      ['none', undefined, { type: 'none' }],
      [{ type: 'function', function: { name: 'get_weather' } }, undefined, { type: 'tool', name: 'get_weather' }],
      ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
      [undefined, undefined, undefined],
    ];
    for (const [toolChoice, parallelToolCalls, expected] of choices) {
      upstream.reset();
      expect((await sentBody({ messages, tools, toolChoice, parallelToolCalls })).tool_choice).to.deep.equal(expected);
    }
  });

  it('sends earlier tool calls as tool_use blocks and tool results as tool_result blocks in one user turn', async () => {
    const body = await sentBody({
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C, sunny' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '14:05' }] },
        { role: 'user', content: 'Thanks, and tomorrow?' },
      ],
    });
    expect(body.messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C, sunny' }] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '14:05' }] },
          { type: 'text', text: 'Thanks, and tomorrow?' },
        ],
      },
    ]);
  });

  it('reads tool_use blocks as tool calls with JSON arguments', async () => {
    upstream.on('POST /v1/messages', { json: toolUseAnswer });
    const result = await chat().doGenerate({ messages: [{ role: 'user', content: 'Weather?' }] }, ctx);
    expect(result).to.deep.equal({
      content: "I'll look up the weather in both cities.",
      toolCalls: [
        { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, FR","unit":"celsius"}' } },
        { id: 'toolu_01B19q90qw90lq917835lq9', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
      finishReason: 'tool_calls',
      // cache reads are prompt tokens too, counted apart as they are priced apart
      usage: { inputTokens: 502, outputTokens: 87, cacheReadTokens: 100 },
      upstreamId: 'msg_01Aq9w938a90dw8q',
    });
  });

  it('maps stop reasons', async () => {
    const cases: Array<[string, string]> = [['stop_sequence', 'stop'], ['max_tokens', 'length'], ['refusal', 'content_filter'], ['pause_turn', 'other']];
    for (const [stopReason, finishReason] of cases) {
      upstream.reset();
      upstream.on('POST /v1/messages', { json: { ...textAnswer, stop_reason: stopReason } });
      const result = await chat().doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx);
      expect(result.finishReason, stopReason).to.equal(finishReason);
    }
  });

  describe('JSON mode', () => {
    it('emulates json_schema with a forced tool and returns its input as the content', async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city'] };
      upstream.on('POST /v1/messages', { json: jsonToolAnswer });

      const result = await chat().doGenerate({
        messages: [{ role: 'user', content: 'Largest city in France?' }],
        responseFormat: { type: 'json_schema', json_schema: { name: 'city', schema, description: 'A city.' } },
      }, ctx);

      expect(result.content).to.equal('{"city":"Paris","population":2102650}');
      expect(result.toolCalls).to.deep.equal([]);
      expect(result.finishReason).to.equal('stop');
      const sent = upstream.received('POST /v1/messages')[0].json;
      expect(sent.tools).to.have.length(1);
      expect(sent.tools[0].name).to.equal('json_response');
      expect(sent.tools[0].input_schema).to.deep.equal(schema);
      expect(sent.tools[0].description).to.contain('A city.');
      expect(sent.tool_choice).to.deep.equal({ type: 'tool', name: 'json_response' });
    });

    it('asks for any object with json_object', async () => {
      const body = await sentBody({ messages: [{ role: 'user', content: 'JSON please' }], responseFormat: { type: 'json_object' } }, jsonToolAnswer);
      expect(body.tools).to.deep.equal([{ name: 'json_response', description: body.tools[0].description, input_schema: { type: 'object' } }]);
      expect(body.tool_choice).to.deep.equal({ type: 'tool', name: 'json_response' });
    });

    it('wraps a schema whose top level is not an object and unwraps the answer', async () => {
      const schema = { type: 'array', items: { type: 'string' } };
      upstream.on('POST /v1/messages', {
        json: { ...jsonToolAnswer, content: [{ type: 'tool_use', id: 'toolu_x', name: 'json_response', input: { value: ['a', 'b'] } }] },
      });
      const result = await chat().doGenerate({
        messages: [{ role: 'user', content: 'Two letters' }],
        responseFormat: { type: 'json_schema', json_schema: { name: 'letters', schema } },
      }, ctx);
      expect(result.content).to.equal('["a","b"]');
      expect(upstream.received('POST /v1/messages')[0].json.tools[0].input_schema).to.deep.equal({
        type: 'object', properties: { value: schema }, required: ['value'],
      });
    });

    it('lets the model choose between caller tools and the JSON answer', async () => {
      const body = await sentBody({
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [{ type: 'function', function: { name: 'lookup' } }],
        responseFormat: { type: 'json_object' },
      }, jsonToolAnswer);
      expect(body.tools.map((t: { name: string }) => t.name)).to.deep.equal(['lookup', 'json_response']);
      expect(body.tools[0].input_schema).to.deep.equal({ type: 'object', properties: {} });
      expect(body.tool_choice).to.deep.equal({ type: 'any' });
    });
  });
});
