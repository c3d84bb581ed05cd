import { expect } from 'chai';
import { createAzureOpenAIProvider } from '../../../providers/azure-openai';
import { azureOpenAIOptionsFromEnv } from '../../../providers/azure-openai';
import type { ChatRequest, Provider } from '../../../providers/types';
import jsonCompletion from '../openai-compatible/fixtures/chat-completion-json.json';
import toolCallCompletion from '../openai-compatible/fixtures/chat-completion-tool-calls.json';
import visionCompletion from '../openai-compatible/fixtures/chat-completion-vision.json';
import streamToolCalls from '../openai-compatible/fixtures/chat-stream-tool-calls.json';
import embeddings from '../openai-compatible/fixtures/embeddings.json';
import transcriptionVerbose from '../openai-compatible/fixtures/transcription-verbose.json';
import { collect, ctx, expectUpstreamError } from '../openai-compatible/harness';
import { API_VERSION, AZURE_KEY, CLIENT_ID, FakeAzure } from './fake-azure';
import completion from './fixtures/chat-completion.json';
import filteredCompletion from './fixtures/chat-completion-filtered.json';
import contentFilterError from './fixtures/content-filter-error.json';

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('azure-openai provider against a fake Azure OpenAI resource', function () {
  this.timeout(30_000);
  const azure = new FakeAzure();
  before(() => azure.start());
  afterEach(() => azure.data.reset());
  after(() => azure.stop());

  const provider = (auth: 'key' | 'entra' = 'key'): Provider => {
    const env = azure.env(auth);
    return createAzureOpenAIProvider({ id: 'azure', apiKey: env.AZURE_OPENAI_API_KEY, ...azureOpenAIOptionsFromEnv(env) } as never);
  };

  describe('with an API key', () => {
    it('chat: the deployment path, api-version, api-key header and exact body; the answer mapped', async () => {
      azure.on('gpt-4o', 'chat/completions', { json: completion });
      const req: ChatRequest = { messages: [{ role: 'user', content: 'Define "gateway".' }], maxTokens: 64, temperature: 0.2, seed: 7, n: 2 };
      const result = await provider().chat!('gpt-4o').doGenerate(req, ctx);
      expect(result).to.deep.equal({
        content: 'A gateway is a single entry point in front of many services.', toolCalls: [], finishReason: 'stop',
        usage: { inputTokens: 3000, outputTokens: 1200 }, upstreamId: 'chatcmpl-AY2tYhR0Ph1x5yYbZ3Rr2v1JqX9cD',
      });
      const [sent] = azure.received('gpt-4o', 'chat/completions');
      expect(sent.query.get('api-version')).to.equal(API_VERSION);
      expect([...sent.query.keys()]).to.deep.equal(['api-version']);
      expect(sent.headers['api-key']).to.equal(AZURE_KEY);
      expect(sent.headers.authorization).to.equal(undefined);
      expect(sent.json).to.deep.equal({ model: 'gpt-4o', messages: req.messages, max_tokens: 64, temperature: 0.2, seed: 7, n: 2 });
    });

    it('chat with tools and JSON mode', async () => {
      azure.on('gpt-4o', 'chat/completions', (req) => ({ json: req.json.tools ? toolCallCompletion : jsonCompletion }));
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
      const called = await provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, toolChoice: 'auto' }, ctx);
      expect(called.finishReason).to.equal('tool_calls');
      expect(called.toolCalls.map((call) => call.function.name)).to.include('get_current_weather');
      const json = await provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'Paris as JSON' }], responseFormat: { type: 'json_object' } }, ctx);
      expect(JSON.parse(json.content!)).to.deep.equal({ city: 'Paris', population: 2102650 });
      const [withTools, withJson] = azure.received('gpt-4o', 'chat/completions');
      expect(withTools.json).to.deep.equal({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'auto' });
      expect(withJson.json).to.deep.equal({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Paris as JSON' }], response_format: { type: 'json_object' } });
    });

    it('chat with an image (vision input) sends the content parts as they came', async () => {
      azure.on('gpt-4o', 'chat/completions', { json: visionCompletion });
      const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, { type: 'image_url' as const, image_url: { url: `data:image/png;base64,${PNG_B64}`, detail: 'low' as const } }] }];
      const result = await provider().chat!('gpt-4o').doGenerate({ messages }, ctx);
      expect(result.content).to.be.a('string').and.not.equal('');
      expect(azure.received('gpt-4o', 'chat/completions')[0].json).to.deep.equal({ model: 'gpt-4o', messages });
    });

    it('streams tool calls with usage', async () => {
      azure.on('gpt-4o-mini', 'chat/completions', { sse: streamToolCalls });
      const parts = await collect(provider().chat!('gpt-4o-mini').doStream({ messages: [{ role: 'user', content: 'Weather and time?' }] }, ctx));
      expect(parts.filter((p) => p.type === 'tool-call-delta' && p.name).map((p) => (p as { name: string }).name)).to.deep.equal(['get_weather', 'get_time']);
      expect(parts.at(-1)).to.deep.equal({ type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 88, outputTokens: 31 } });
      const [sent] = azure.received('gpt-4o-mini', 'chat/completions');
      expect(sent.headers.accept).to.equal('text/event-stream');
      expect(sent.json).to.deep.equal({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather and time?' }], stream: true, stream_options: { include_usage: true } });
    });

    it('embeddings', async () => {
      azure.on('text-embedding-3-small', 'embeddings', { json: embeddings });
      const result = await provider().embedding!('text-embedding-3-small').doEmbed({ input: ['a', 'b'], dimensions: 3 }, ctx);
      expect(result.embeddings).to.have.length(2);
      expect(result.embeddings[0]).to.deep.equal([-0.006929283, -0.005336422, 0.024047505]);
      expect(azure.received('text-embedding-3-small', 'embeddings')[0].json).to.deep.equal({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float', dimensions: 3 });
    });

    it('image generation (DALL-E 3)', async () => {
      azure.on('dall-e-3', 'images/generations', { json: { created: 1732700200, data: [{ b64_json: PNG_B64, revised_prompt: 'A red fox in snow, photographic.', content_filter_results: {}, prompt_filter_results: {} }] } });
      const result = await provider().image!('dall-e-3').doGenerate({ prompt: 'a red fox', n: 1, size: '1024x1024', params: { quality: 'hd', response_format: 'b64_json' } }, ctx);
      expect(result.images).to.have.length(1);
      expect(result.images[0].data).to.deep.equal(Buffer.from(PNG_B64, 'base64'));
      expect(result.images[0].revisedPrompt).to.equal('A red fox in snow, photographic.');
      expect(azure.received('dall-e-3', 'images/generations')[0].json).to.deep.equal({ quality: 'hd', response_format: 'b64_json', model: 'dall-e-3', prompt: 'a red fox', n: 1, size: '1024x1024' });
    });

    it('speech', async () => {
      const audio = Buffer.from('ID3\u0004fake-mp3-frames');
      azure.on('tts-1', 'audio/speech', { headers: { 'content-type': 'application/octet-stream' }, body: audio });
      const result = await provider().speech!('tts-1').doSynthesize({ input: 'Hello', voice: 'alloy', format: 'mp3', speed: 1 }, ctx);
      expect(result).to.deep.equal({ audio, mediaType: 'audio/mpeg' });
      expect(azure.received('tts-1', 'audio/speech')[0].json).to.deep.equal({ model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'mp3', speed: 1 });
    });

    it('transcription (multipart to the deployment)', async () => {
      azure.on('whisper-1', 'audio/transcriptions', { json: transcriptionVerbose });
      const result = await provider().transcription!('whisper-1').doTranscribe({ audio: Buffer.from('RIFF....WAVE'), filename: 'a.wav', mediaType: 'audio/wav' }, ctx);
      expect(result.text).to.equal(transcriptionVerbose.text);
      const [sent] = azure.received('whisper-1', 'audio/transcriptions');
      expect(sent.headers['content-type']).to.match(/^multipart\/form-data/);
      expect(sent.raw.toString('latin1')).to.contain('name="response_format"\r\n\r\nverbose_json');
    });

    it("a prompt Azure's content filter refuses is a 400 content_filtered naming the category, not retried", async () => {
      azure.on('gpt-4o', 'chat/completions', { status: 400, json: contentFilterError });
      const error = await expectUpstreamError(provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'something violent' }] }, ctx), 'caller_error');
      expect([error.status, error.code, error.retryable]).to.deep.equal([400, 'content_filtered', false]);
      expect(error.message).to.equal('azure refused the content under its content filter (violence: high)');
    });

    it('an answer the content filter withheld entirely (finish_reason content_filter) is a 400 content_filtered', async () => {
      azure.on('gpt-4o', 'chat/completions', { json: filteredCompletion });
      const error = await expectUpstreamError(provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'x' }] }, ctx), 'caller_error');
      expect([error.status, error.code]).to.deep.equal([400, 'content_filtered']);
    });

    it('429 is rate_limited with its Retry-After (the gateway retries, then falls back); a wrong key is provider_auth_failed', async () => {
      azure.on('gpt-4o', 'chat/completions', { status: 429, headers: { 'retry-after': '3' }, json: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded the token rate limit.' } } });
      const limited = await expectUpstreamError(provider().chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'x' }] }, ctx), 'rate_limited');
      expect([limited.retryAfterMs, limited.retryable]).to.deep.equal([3000, true]);
      const wrong = createAzureOpenAIProvider({ id: 'azure', apiKey: 'wrong', ...azureOpenAIOptionsFromEnv(azure.env('key')) } as never);
      const refused = await expectUpstreamError(wrong.chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'x' }] }, ctx), 'caller_error');
      expect(refused.code).to.equal('provider_auth_failed');
    });
  });

  describe('with Microsoft Entra ID (client credentials against a fake authority)', () => {
    it('asks the authority once for a token, sends it as a bearer, and reuses it while it lives', async () => {
      azure.authority.tokenRequests.length = 0;
      azure.on('gpt-4o', 'chat/completions', (req) => (req.json.stream ? { sse: streamToolCalls } : { json: completion }));
      azure.on('text-embedding-3-small', 'embeddings', { json: embeddings });
      const entra = provider('entra');
      expect((await entra.chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx)).usage).to.deep.equal({ inputTokens: 3000, outputTokens: 1200 });
      expect((await entra.embedding!('text-embedding-3-small').doEmbed({ input: ['a', 'b'] }, ctx)).embeddings).to.have.length(2);
      const streamed = await collect(entra.chat!('gpt-4o').doStream({ messages: [{ role: 'user', content: 'hi' }] }, ctx));
      expect(streamed.at(-1)).to.deep.include({ type: 'finish', finishReason: 'tool_calls' });
      expect(azure.received('gpt-4o', 'chat/completions')).to.have.length(2);
      expect(azure.authority.tokenRequests).to.have.length(1);
      const [form] = azure.authority.tokenRequests;
      expect([form.get('grant_type'), form.get('client_id'), form.get('scope')]).to.deep.equal(['client_credentials', CLIENT_ID, 'https://cognitiveservices.azure.com/.default']);
      for (const sent of [...azure.received('gpt-4o', 'chat/completions'), ...azure.received('text-embedding-3-small', 'embeddings')]) {
        expect(sent.headers.authorization).to.equal('Bearer entra-token-1');
        expect(sent.headers['api-key']).to.equal(undefined);
        expect(sent.query.get('api-version')).to.equal(API_VERSION);
      }
    });

    it('a wrong client secret is provider_auth_failed before anything reaches the deployment', async () => {
      azure.on('gpt-4o', 'chat/completions', { json: completion });
      const env = { ...azure.env('entra'), AZURE_CLIENT_SECRET: 'wrong' };
      const entra = createAzureOpenAIProvider({ id: 'azure', ...azureOpenAIOptionsFromEnv(env) } as never);
      const error = await expectUpstreamError(entra.chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx), 'caller_error');
      expect(error.code).to.equal('provider_auth_failed');
      expect(azure.received('gpt-4o', 'chat/completions')).to.have.length(0);
    });
  });

  it('is not configured without an endpoint, or without a key or Entra ID', () => {
    expect(createAzureOpenAIProvider({ id: 'azure', apiKey: AZURE_KEY, ...azureOpenAIOptionsFromEnv({}) } as never).configured).to.equal(false);
    expect(createAzureOpenAIProvider({ id: 'azure', ...azureOpenAIOptionsFromEnv({ AZURE_OPENAI_ENDPOINT: azure.data.url }) } as never).configured).to.equal(false);
    expect(provider('key').configured).to.equal(true);
    expect(provider('entra').configured).to.equal(true);
  });
});
