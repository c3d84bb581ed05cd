import { expect } from 'chai';
import { bedrockOptionsFromEnv, createBedrockProvider } from '../../../providers/bedrock';
import type { ChatRequest, Provider } from '../../../providers/types';
import { collect, ctx, expectUpstreamError } from '../openai-compatible/harness';
import { ACCESS_KEY_ID, bedrockError, eventStream, FakeBedrock, REGION, ROLE_ARN, type StreamEvent } from './fake-bedrock';
import cohereEmbedding from './fixtures/cohere-embedding.json';
import streamText from './fixtures/converse-stream-text.json';
import streamToolUse from './fixtures/converse-stream-tool-use.json';
import converseText from './fixtures/converse-text.json';
import converseToolUse from './fixtures/converse-tool-use.json';
import titanEmbedding from './fixtures/titan-embedding.json';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('bedrock provider against a fake Bedrock runtime that verifies SigV4', function () {
  this.timeout(30_000);
  const bedrock = new FakeBedrock();
  before(() => bedrock.start());
  afterEach(() => bedrock.reset());
  after(() => bedrock.stop());

  const provider = (env: NodeJS.ProcessEnv = bedrock.env('keys')): Provider => createBedrockProvider({
    id: 'bedrock', baseUrl: env.BEDROCK_BASE_URL ?? '', timeoutMs: env.BEDROCK_TIMEOUT_MS ? Number(env.BEDROCK_TIMEOUT_MS) : undefined,
    ...bedrockOptionsFromEnv(env),
  });

  describe('chat through Converse', () => {
    it('signed with the static keys: the path, the exact body, the answer, usage and stop reason mapped', async () => {
      bedrock.on(CLAUDE, 'converse', { headers: { 'x-amzn-requestid': '7e1f0a52-3c1b-4d2e-9f8a-0b1c2d3e4f50' }, json: converseText });
      const req: ChatRequest = {
        messages: [{ role: 'system', content: 'Answer in one sentence.' }, { role: 'user', content: 'Define "gateway".' }],
        maxTokens: 64, temperature: 0.2, topP: 0.9, stop: ['END'],
      };
      const result = await provider().chat!(CLAUDE).doGenerate(req, ctx);
      expect(result).to.deep.equal({
        content: 'A gateway is a single entry point in front of many services.', toolCalls: [], finishReason: 'stop',
        usage: { inputTokens: 3000, outputTokens: 1200 }, upstreamId: '7e1f0a52-3c1b-4d2e-9f8a-0b1c2d3e4f50',
      });
      const [sent] = bedrock.received(CLAUDE, 'converse');
      expect(sent.path).to.equal('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
      expect(sent.json).to.deep.equal({
        messages: [{ role: 'user', content: [{ text: 'Define "gateway".' }] }],
        system: [{ text: 'Answer in one sentence.' }],
        inferenceConfig: { maxTokens: 64, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      });
      expect(bedrock.verified).to.have.length(1);
      expect(bedrock.verified[0]).to.deep.include({ region: REGION, service: 'bedrock' });
      expect(bedrock.verified[0].credentials.accessKeyId).to.equal(ACCESS_KEY_ID);
      expect(sent.headers['x-amz-security-token']).to.equal(undefined);
    });

    it('tools, tool_choice, a tool round trip and an inline image: Converse blocks, turns of one role merged', async () => {
      bedrock.on(CLAUDE, 'converse', { json: converseToolUse });
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
      const req: ChatRequest = {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Where is this, and its weather?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'tooluse_1', content: '18°C, clear' },
          { role: 'user', content: 'And tomorrow?' },
        ],
        tools, toolChoice: { type: 'function', function: { name: 'get_weather' } },
      };
      const result = await provider().chat!(CLAUDE).doGenerate(req, ctx);
      expect(result.finishReason).to.equal('tool_calls');
      expect(result.content).to.equal('I\'ll look up the current weather in Paris.');
      expect(result.toolCalls).to.deep.equal([{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris","unit":"celsius"}' } }]);
      expect(result.usage).to.deep.equal({ inputTokens: 393, outputTokens: 67 });
      expect(bedrock.received(CLAUDE, 'converse')[0].json).to.deep.equal({
        messages: [
          { role: 'user', content: [{ text: 'Where is this, and its weather?' }, { image: { format: 'png', source: { bytes: PNG_B64 } } }] },
          { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { location: 'Paris' } } }] },
          { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18°C, clear' }] } }, { text: 'And tomorrow?' }] },
        ],
        toolConfig: {
          tools: [{ toolSpec: { name: 'get_weather', description: 'Weather now', inputSchema: { json: tools[0].function.parameters } } }],
          toolChoice: { tool: { name: 'get_weather' } },
        },
      });
    });

    it('maps each stop reason to OpenAI\'s finish_reason', async () => {
      const cases: Array<[string, string]> = [
        ['end_turn', 'stop'], ['stop_sequence', 'stop'], ['max_tokens', 'length'], ['tool_use', 'tool_calls'],
        ['content_filtered', 'content_filter'], ['guardrail_intervened', 'content_filter'],
      ];
      for (const [stopReason, finishReason] of cases) {
        bedrock.on(LLAMA, 'converse', { json: { ...converseText, stopReason } });
        const result = await provider().chat!(LLAMA).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
        expect(result.finishReason, stopReason).to.equal(finishReason);
      }
    });

    it('an image given by URL is refused before anything is sent (Converse takes bytes only)', async () => {
      let caught: unknown;
      try {
        await provider().chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }, ctx);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.deep.include({ status: 400, code: 'invalid_image_url' });
      expect(bedrock.runtime.requests).to.have.length(0);
    });
  });

  describe('streaming through ConverseStream (AWS event-stream frames)', () => {
    it('text deltas, then finish with the usage of the metadata event', async () => {
      bedrock.on(CLAUDE, 'converse-stream', eventStream(streamText as StreamEvent[]));
      const parts = await collect(provider().chat!(CLAUDE).doStream({ messages: [{ role: 'user', content: 'Define "gateway".' }], maxTokens: 100 }, ctx));
      expect(parts).to.deep.equal([
        { type: 'text-delta', delta: 'A gateway is' },
        { type: 'text-delta', delta: ' a single entry point.' },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3000, outputTokens: 1200 } },
      ]);
      const [sent] = bedrock.received(CLAUDE, 'converse-stream');
      expect(sent.json).to.deep.equal({ messages: [{ role: 'user', content: [{ text: 'Define "gateway".' }] }], inferenceConfig: { maxTokens: 100 } });
      expect(bedrock.verified).to.have.length(1);
    });

    it('tool calls numbered among tools only, their arguments streamed', async () => {
      bedrock.on(CLAUDE, 'converse-stream', eventStream(streamToolUse as StreamEvent[]));
      const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
      const parts = await collect(provider().chat!(CLAUDE).doStream({ messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, toolChoice: 'required' }, ctx));
      expect(parts).to.deep.equal([
        { type: 'text-delta', delta: 'Let me check' },
        { type: 'text-delta', delta: ' the weather.' },
        { type: 'tool-call-delta', index: 0, id: 'tooluse_9XWnnyDkQ0ugZ0bCtfKZ8g', name: 'get_weather', argumentsDelta: '' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"location": ' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 412, outputTokens: 58 } },
      ]);
      expect(bedrock.received(CLAUDE, 'converse-stream')[0].json.toolConfig.toolChoice).to.deep.equal({ any: {} });
    });

    it('a throttlingException frame mid-stream is a rate_limited error after the parts before it', async () => {
      bedrock.on(CLAUDE, 'converse-stream', eventStream([
        ['messageStart', { role: 'assistant' }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }],
        { exception: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
      ]));
      const parts: unknown[] = [];
      const error = await expectUpstreamError((async () => {
        for await (const part of provider().chat!(CLAUDE).doStream({ messages: [{ role: 'user', content: 'hi' }] }, ctx)) parts.push(part);
      })(), 'rate_limited');
      expect(parts).to.deep.equal([{ type: 'text-delta', delta: 'Hel' }]);
      expect(error.status).to.equal(429);
    });
  });

  describe('embeddings through InvokeModel', () => {
    it('Titan Text Embeddings V2: one signed call per text with its dimensions, tokens from Bedrock\'s header', async () => {
      bedrock.on('amazon.titan-embed-text-v2:0', 'invoke', (req) => ({ headers: { 'x-amzn-bedrock-input-token-count': String(req.json.inputText.length) }, json: titanEmbedding }));
      const result = await provider().embedding!('amazon.titan-embed-text-v2:0').doEmbed({ input: ['the gateway', 'a second text'], dimensions: 256 }, ctx);
      expect(result).to.deep.equal({ embeddings: [titanEmbedding.embedding, titanEmbedding.embedding], usage: { inputTokens: 11 + 13 } });
      const sent = bedrock.received('amazon.titan-embed-text-v2:0', 'invoke');
      expect(sent.map((r) => r.json).sort((a, b) => a.inputText.localeCompare(b.inputText))).to.deep.equal([
        { inputText: 'a second text', dimensions: 256 }, { inputText: 'the gateway', dimensions: 256 },
      ]);
      expect(sent[0].headers['content-type']).to.equal('application/json');
      expect(sent[0].headers.accept).to.equal('application/json');
      expect(bedrock.verified).to.have.length(2);
    });

    it('Cohere Embed v3: the texts in one call as documents, float vectors', async () => {
      bedrock.on('cohere.embed-english-v3', 'invoke', { headers: { 'x-amzn-bedrock-input-token-count': '7' }, json: cohereEmbedding });
      const result = await provider().embedding!('cohere.embed-english-v3').doEmbed({ input: ['the gateway', 'a second text'] }, ctx);
      expect(result).to.deep.equal({ embeddings: cohereEmbedding.embeddings.float, usage: { inputTokens: 7 } });
      expect(bedrock.received('cohere.embed-english-v3', 'invoke').map((r) => r.json)).to.deep.equal([
        { texts: ['the gateway', 'a second text'], input_type: 'search_document', embedding_types: ['float'] },
      ]);
    });
  });

  describe('credentials', () => {
    it('a role: AssumeRole signed with the keys at the STS endpoint, then Bedrock signed with the temporary credentials, once for several calls', async () => {
      bedrock.on(CLAUDE, 'converse', { json: converseText });
      const chat = provider(bedrock.env('role')).chat!(CLAUDE);
      for (let i = 0; i < 2; i++) await chat.doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
      expect(bedrock.assumed).to.have.length(1);
      expect(Object.fromEntries(bedrock.assumed[0])).to.deep.equal({ Action: 'AssumeRole', Version: '2011-06-15', RoleArn: ROLE_ARN, RoleSessionName: 'gateway-test' });
      expect(bedrock.verified.map((v) => v.credentials.accessKeyId)).to.deep.equal(['ASIAFAKESTS000000001', 'ASIAFAKESTS000000001']);
      const sent = bedrock.received(CLAUDE, 'converse');
      expect(sent.map((r) => r.headers['x-amz-security-token'])).to.deep.equal(['FwoGZXIvYXdzEFAKE//session-token-1', 'FwoGZXIvYXdzEFAKE//session-token-1']);
      expect(bedrock.verified[0].signedHeaders).to.include('x-amz-security-token');
    });

    it('a role STS refuses is 502 provider_auth_failed, with nothing sent to Bedrock', async () => {
      bedrock.refuseRole = true;
      const error = await expectUpstreamError(provider(bedrock.env('role')).chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx), 'caller_error');
      expect([error.status, error.code, error.fallsBack]).to.deep.equal([502, 'provider_auth_failed', false]);
      expect(bedrock.assumed).to.have.length(1);
      expect(bedrock.runtime.requests).to.have.length(0);
    });

    it('a wrong secret fails the signature check: the fake\'s InvalidSignatureException is 502 provider_auth_failed', async () => {
      bedrock.on(CLAUDE, 'converse', { json: converseText });
      const env = { ...bedrock.env('keys'), BEDROCK_SECRET_ACCESS_KEY: 'not-the-secret-0123456789abcdefghij' };
      const error = await expectUpstreamError(provider(env).chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx), 'caller_error');
      expect([error.status, error.code, error.upstreamStatus]).to.deep.equal([502, 'provider_auth_failed', 403]);
      expect(error.message).to.equal('bedrock refused the gateway\'s credentials');
      expect(bedrock.verified).to.have.length(0);
    });

    it('without a region the provider is not configured and sends nothing', async () => {
      const bare = provider({ BEDROCK_ACCESS_KEY_ID: ACCESS_KEY_ID, BEDROCK_SECRET_ACCESS_KEY: 'x'.repeat(40), BEDROCK_BASE_URL: bedrock.runtime.url });
      expect(bare.configured).to.equal(false);
      await expectUpstreamError(bare.chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx), 'not_configured');
      expect(bedrock.runtime.requests).to.have.length(0);
    });
  });

  describe('Bedrock\'s errors as the gateway\'s', () => {
    const cases: Array<[number, string, string, number, boolean]> = [
      [429, 'ThrottlingException', 'rate_limited', 429, true],
      [400, 'ValidationException', 'caller_error', 400, false],
      [403, 'AccessDeniedException', 'caller_error', 502, false],
      [503, 'ServiceUnavailableException', 'server_error', 503, true],
      [429, 'ModelNotReadyException', 'server_error', 503, true],
      [500, 'InternalServerException', 'server_error', 502, true],
      [424, 'ModelErrorException', 'server_error', 502, true],
      [408, 'ModelTimeoutException', 'timeout', 504, true],
      [404, 'ResourceNotFoundException', 'caller_error', 404, false],
    ];
    for (const [status, type, kind, clientStatus, fallsBack] of cases) {
      it(`${type} (${status}) is ${kind}, ${clientStatus} to the caller${fallsBack ? ', falls back' : ''}`, async () => {
        bedrock.on(CLAUDE, 'converse', bedrockError(status, type, `${type} from the fake`));
        const error = await expectUpstreamError(provider().chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx), kind as never);
        expect([error.status, error.fallsBack], error.message).to.deep.equal([clientStatus, fallsBack]);
        if (type === 'AccessDeniedException') expect(error.code).to.equal('provider_auth_failed');
        if (type === 'ValidationException') expect(error.message).to.contain('ValidationException from the fake');
      });
    }

    it('a call past its deadline is a timeout', async () => {
      bedrock.on(CLAUDE, 'converse', () => ({ hang: true }));
      await expectUpstreamError(provider().chat!(CLAUDE).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, { ...ctx, timeoutMs: 300 }), 'timeout');
    });
  });
});
