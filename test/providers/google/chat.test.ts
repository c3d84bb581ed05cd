import { expect } from 'chai';
import { InvalidRequestError } from '../../../core/errors';
import { createGoogleProvider } from '../../../providers/google';
import type { ChatRequest } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import blocked from './fixtures/generate-blocked.json';
import functionCallAnswer from './fixtures/generate-function-call.json';
import textAnswer from './fixtures/generate-text.json';
import { ctx } from './support';

const FLASH = 'POST /v1beta/models/gemini-2.5-flash:generateContent';
const PRO3 = 'POST /v1beta/models/gemini-3-pro-preview:generateContent';
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('google chat adapter (doGenerate)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function chat(model = 'gemini-2.5-flash') {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).chat!(model);
  }

  async function sentBody(req: ChatRequest, model = 'gemini-2.5-flash', answer: unknown = textAnswer) {
    const route = `POST /v1beta/models/${model}:generateContent`;
    upstream.on(route, { json: answer });
    await chat(model).doGenerate(req, ctx);
    return upstream.received(route)[0].json;
  }

  it('sends generateContent with the key header and reads text, finish and usage', async () => {
    upstream.on(FLASH, { json: textAnswer });

    const result = await chat().doGenerate({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
        { role: 'user', content: 'Capital of France?' },
      ],
      maxTokens: 200,
      temperature: 0.3,
      topP: 0.8,
      stop: ['END'],
      seed: 7,
    }, ctx);

    expect(result).to.deep.equal({
      content: 'The capital of France is Paris.',
      toolCalls: [],
      finishReason: 'stop',
      // thinking tokens are billed as output
      usage: { inputTokens: 11, outputTokens: 34 },
      upstreamId: 'eS1oaKGxNNKKqtsPrMPBqQM',
    });
    const [sent] = upstream.received(FLASH);
    expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
    expect(sent.headers['content-type']).to.equal('application/json');
    expect(sent.query.get('key')).to.equal(null);
    expect(sent.json).to.deep.equal({
      contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.\n\nAnswer in English.' }] },
      generationConfig: { maxOutputTokens: 200, temperature: 0.3, topP: 0.8, stopSequences: ['END'], seed: 7 },
    });
  });

  it('accepts a base URL that already names the API version', async () => {
    upstream.on(FLASH, { json: textAnswer });
    await createGoogleProvider({ id: 'google', baseUrl: `${baseUrl}/v1beta/`, apiKey: 'k' }).chat!('models/gemini-2.5-flash')
      .doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx);
    expect(upstream.received(FLASH)).to.have.length(1);
  });

  it('uses user/model roles and merges consecutive turns of one role', async () => {
    const body = await sentBody({
      messages: [
        { role: 'user', content: 'One.' },
        { role: 'user', content: 'Two.' },
        { role: 'assistant', content: 'Reply.' },
        { role: 'user', content: 'Three.' },
      ],
    });
    expect(body.contents).to.deep.equal([
      { role: 'user', parts: [{ text: 'One.' }, { text: 'Two.' }] },
      { role: 'model', parts: [{ text: 'Reply.' }] },
      { role: 'user', parts: [{ text: 'Three.' }] },
    ]);
  });

  it('translates images, audio and files: data URLs inline, http URLs as fileData with a guessed type', async () => {
    const body = await sentBody({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'Describe.' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          { type: 'image_url', image_url: { url: 'https://example.com/photos/cat.webp?size=large' } },
          { type: 'image_url', image_url: { url: 'https://example.com/render' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { filename: 'doc.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        ],
      }],
    });
    expect(body.contents[0].parts).to.deep.equal([
      { text: 'Describe.' },
      { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/photos/cat.webp?size=large' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('sends tools as functionDeclarations and maps tool_choice to functionCallingConfig', async () => {
    const parameters = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false };
    const tools: ChatRequest['tools'] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters } },
      { type: 'function', function: { name: 'get_time' } },
    ];
    const messages: ChatRequest['messages'] = [{ role: 'user', content: 'Weather?' }];

    const body = await sentBody({ messages, tools });
    expect(body.tools).to.deep.equal([{
      functionDeclarations: [
        { name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: parameters },
        { name: 'get_time' },
      ],
    }]);
    expect(body.toolConfig).to.equal(undefined);

    const choices: Array<[ChatRequest['toolChoice'], unknown]> = [
      ['auto', { mode: 'AUTO' }],
      ['required', { mode: 'ANY' }],
      ['none', { mode: 'NONE' }],
      [{ type: 'function', function: { name: 'get_time' } }, { mode: 'ANY', allowedFunctionNames: ['get_time'] }],
    ];
    for (const [toolChoice, expected] of choices) {
      upstream.reset();
      expect((await sentBody({ messages, tools, toolChoice })).toolConfig).to.deep.equal({ functionCallingConfig: expected });
    }
  });

  it('reads function calls as tool calls with generated ids that are stable per response', async () => {
    upstream.on(PRO3, { json: functionCallAnswer });
    const first = await chat('gemini-3-pro-preview').doGenerate({ messages: [{ role: 'user', content: 'Weather?' }] }, ctx);
    const again = await chat('gemini-3-pro-preview').doGenerate({ messages: [{ role: 'user', content: 'Weather?' }] }, ctx);

    expect(first.content).to.equal(null);
    expect(first.finishReason).to.equal('tool_calls');
    expect(first.usage).to.deep.equal({ inputTokens: 96, outputTokens: 22 });
    expect(first.toolCalls.map((c) => c.function)).to.deep.equal([
      { name: 'get_weather', arguments: '{"location":"Paris"}' },
      { name: 'get_time', arguments: '{}' },
    ]);
    const [weather, time] = first.toolCalls;
    expect(weather.id).to.match(/^call_[0-9a-f]{24}__sig_CiQBcsjafExampleSignature\+\/==$/);
    expect(time.id).to.match(/^call_[0-9a-f]{24}$/);
    expect(weather.id).to.not.equal(time.id);
    expect(again.toolCalls.map((c) => c.id)).to.deep.equal([weather.id, time.id]);
  });

  it('sends earlier calls back as functionCall parts (with their thought signature) and results as functionResponse parts', async () => {
    upstream.on(PRO3, { json: functionCallAnswer });
    const { toolCalls } = await chat('gemini-3-pro-preview').doGenerate({ messages: [{ role: 'user', content: 'Weather?' }] }, ctx);
    upstream.reset();

    const body = await sentBody({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: toolCalls },
        { role: 'tool', tool_call_id: toolCalls[0].id, content: '{"temperature":18,"sky":"clear"}' },
        { role: 'tool', tool_call_id: toolCalls[1].id, content: '14:05' },
      ],
    }, 'gemini-3-pro-preview');

    expect(body.contents).to.deep.equal([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'CiQBcsjafExampleSignature+/==' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temperature: 18, sky: 'clear' } } },
          { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
        ],
      },
    ]);
  });

  it('marks calls without a signature so Gemini 3 accepts history from elsewhere, and leaves older models alone', async () => {
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_from_another_model', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_from_another_model', content: 'rain' },
    ];
    const gemini3 = await sentBody({ messages }, 'gemini-3-pro-preview');
    expect(gemini3.contents[1].parts[0].thoughtSignature).to.equal('skip_thought_signature_validator');

    upstream.reset();
    const gemini25 = await sentBody({ messages });
    expect(gemini25.contents[1].parts[0]).to.deep.equal({ functionCall: { name: 'get_weather', args: { location: 'Oslo' } } });
  });

  it('refuses a tool result whose call it cannot find, without calling upstream', async () => {
    upstream.on(FLASH, { json: textAnswer });
    const error = await chat().doGenerate({ messages: [{ role: 'tool', tool_call_id: 'call_x', content: 'orphan' }] }, ctx).catch((err) => err);
    expect(error).to.be.instanceOf(InvalidRequestError);
    expect(upstream.requests).to.have.length(0);
  });

  it('asks for JSON with responseMimeType, and passes a json_schema as responseJsonSchema', async () => {
    upstream.on(FLASH, { json: { ...textAnswer, candidates: [{ content: { parts: [{ text: '{"city":"Paris"}' }], role: 'model' }, finishReason: 'STOP' }] } });
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const result = await chat().doGenerate({
      messages: [{ role: 'user', content: 'City?' }],
      responseFormat: { type: 'json_schema', json_schema: { name: 'city', schema, strict: true } },
    }, ctx);
    expect(result.content).to.equal('{"city":"Paris"}');
    expect(upstream.received(FLASH)[0].json.generationConfig).to.deep.equal({ responseMimeType: 'application/json', responseJsonSchema: schema });

    upstream.reset();
    const body = await sentBody({ messages: [{ role: 'user', content: 'JSON' }], responseFormat: { type: 'json_object' } });
    expect(body.generationConfig).to.deep.equal({ responseMimeType: 'application/json' });
  });

  it('maps finish reasons and a blocked prompt', async () => {
    const cases: Array<[string, string]> = [['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter'], ['RECITATION', 'content_filter'], ['MALFORMED_FUNCTION_CALL', 'error'], ['OTHER', 'other']];
    for (const [finishReason, expected] of cases) {
      upstream.reset();
      upstream.on(FLASH, { json: { ...textAnswer, candidates: [{ ...textAnswer.candidates[0], finishReason }] } });
      expect((await chat().doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)).finishReason, finishReason).to.equal(expected);
    }

    upstream.reset();
    upstream.on(FLASH, { json: blocked });
    expect(await chat().doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx)).to.deep.equal({
      content: null, toolCalls: [], finishReason: 'content_filter', usage: { inputTokens: 7, outputTokens: 0 }, upstreamId: 'gC1oaBlocked',
    });
  });
});
