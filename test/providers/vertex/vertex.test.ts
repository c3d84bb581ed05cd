import { expect } from 'chai';
import fs from 'node:fs';
import { createVertexProvider, vertexOptionsFromEnv, VERTEX_ANTHROPIC_VERSION } from '../../../providers/vertex';
import type { CallContext, ChatRequest, Provider } from '../../../providers/types';
import { collect, upstreamFailure } from '../../support/adapter-assertions';
import { CLIENT_EMAIL, FakeGoogleCloud, SCOPE, TOKEN_AUDIENCE } from './fake-vertex';
import claudeMessage from './fixtures/claude-message.json';
import claudeStream from './fixtures/claude-stream.json';
import embedPredict from './fixtures/embed-predict.json';
import invalidArgument from './fixtures/error-invalid-argument.json';
import permissionDenied from './fixtures/error-permission-denied.json';
import resourceExhausted from './fixtures/error-resource-exhausted.json';
import geminiGenerate from './fixtures/gemini-generate.json';
import geminiStream from './fixtures/gemini-stream.json';

const ctx: CallContext = { requestId: 'req_test', timeoutMs: 10_000 };

describe('vertex provider against a fake Google Cloud (token endpoint and Vertex AI)', function () {
  this.timeout(30_000);
  const cloud = new FakeGoogleCloud();
  before(() => cloud.start());
  afterEach(() => {
    cloud.data.reset();
    cloud.assertions.length = 0;
    cloud.expiresIn = 3600;
  });
  after(() => cloud.stop());

  /** A provider built from the environment, as the gateway builds it (a new one has no token yet). */
  const provider = (env: NodeJS.ProcessEnv = cloud.env()): Provider => createVertexProvider({ id: 'vertex', ...vertexOptionsFromEnv(env) } as never);

  it('Gemini chat: a JWT signed with the service account key buys the bearer; the exact path and body; the answer mapped', async () => {
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { json: geminiGenerate });
    const req: ChatRequest = { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }], maxTokens: 64, temperature: 0.2 };
    const result = await provider().chat!('gemini-2.5-pro').doGenerate(req, ctx);
    expect(result).to.deep.include({ content: 'Paris is the capital of France.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 2000, outputTokens: 1000 } });

    // The token endpoint verified the RS256 signature against the account's public key, and the claims.
    expect(cloud.assertions).to.have.length(1);
    const { header, claims } = cloud.assertions[0];
    expect(header.alg).to.equal('RS256');
    expect(claims).to.include({ iss: CLIENT_EMAIL, aud: TOKEN_AUDIENCE, scope: SCOPE });
    expect((claims.exp as number) - (claims.iat as number)).to.equal(3600);

    const [sent] = cloud.received('google', 'gemini-2.5-pro', 'generateContent');
    expect(sent.path).to.equal('/v1/projects/gateway-test-project/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent');
    expect(sent.headers.authorization).to.equal('Bearer ya29.fake-token-1');
    expect(sent.json).to.deep.equal({
      contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 64, temperature: 0.2 },
    });
  });

  it('Gemini stream: `:streamGenerateContent?alt=sse`, text deltas and the last usage', async () => {
    cloud.on('google', 'gemini-2.5-flash', 'streamGenerateContent', (req) => (req.query.get('alt') === 'sse' ? { sse: geminiStream } : { status: 400, json: invalidArgument }));
    const parts = await collect(provider().chat!('gemini-2.5-flash').doStream({ messages: [{ role: 'user', content: 'Tell me a story.' }] }, ctx));
    expect(parts).to.deep.equal([
      { type: 'text-delta', delta: 'Once upon' },
      { type: 'text-delta', delta: ' a time.' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1000, outputTokens: 500 } },
    ]);
    const [sent] = cloud.received('google', 'gemini-2.5-flash', 'streamGenerateContent');
    expect([...sent.query.entries()]).to.deep.equal([['alt', 'sse']]);
    expect(sent.json).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'Tell me a story.' }] }] });
  });

  it('Claude: `:rawPredict` under publishers/anthropic, anthropic_version in the body and no model', async () => {
    cloud.on('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', { json: claudeMessage });
    const req: ChatRequest = { messages: [{ role: 'system', content: 'Answer in one sentence.' }, { role: 'user', content: 'Define "gateway".' }], maxTokens: 2000, temperature: 0.5 };
    const result = await provider().chat!('claude-sonnet-4@20250514').doGenerate(req, ctx);
    expect(result).to.deep.include({ content: 'A gateway is a single entry point in front of many services.', finishReason: 'stop', upstreamId: 'msg_vrtx_01Lq8Jd2rYt7wXhM3pZkQ5nB' });
    expect(result.usage).to.deep.include({ inputTokens: 3000, outputTokens: 1000 });
    const [sent] = cloud.received('anthropic', 'claude-sonnet-4@20250514', 'rawPredict');
    expect(sent.path).to.equal('/v1/projects/gateway-test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict');
    expect(sent.headers.authorization).to.equal('Bearer ya29.fake-token-1');
    expect(sent.headers).to.not.have.property('anthropic-version');
    expect(sent.headers).to.not.have.property('x-api-key');
    expect(sent.json).to.deep.equal({
      anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 2000, temperature: 0.5, system: 'Answer in one sentence.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Define "gateway".' }] }],
    });
  });

  it('Claude stream: `:streamRawPredict` with stream: true, events translated', async () => {
    cloud.on('anthropic', 'claude-3-5-haiku@20241022', 'streamRawPredict', { sse: claudeStream });
    const parts = await collect(provider().chat!('claude-3-5-haiku@20241022').doStream({ messages: [{ role: 'user', content: 'hi' }], maxTokens: 100 }, ctx));
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta).join('')).to.equal('Hello from Vertex.');
    expect(parts.at(-1)).to.deep.include({ type: 'finish', finishReason: 'stop' });
    const [sent] = cloud.received('anthropic', 'claude-3-5-haiku@20241022', 'streamRawPredict');
    expect(sent.json).to.deep.equal({ anthropic_version: VERTEX_ANTHROPIC_VERSION, max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true });
  });

  it('embeddings: `:predict` with one instance per text, the token counts Vertex reports, and dimensions', async () => {
    cloud.on('google', 'text-embedding-005', 'predict', { json: embedPredict });
    const result = await provider().embedding!('text-embedding-005').doEmbed({ input: ['The quick brown fox', 'jumps over'], dimensions: 3 }, ctx);
    expect(result).to.deep.equal({ embeddings: [[0.0123, -0.0456, 0.0789], [-0.0321, 0.0654, -0.0987]], usage: { inputTokens: 10 } });
    const [sent] = cloud.received('google', 'text-embedding-005', 'predict');
    expect(sent.headers.authorization).to.equal('Bearer ya29.fake-token-1');
    expect(sent.json).to.deep.equal({ instances: [{ content: 'The quick brown fox' }, { content: 'jumps over' }], parameters: { outputDimensionality: 3 } });
  });

  it('gemini-embedding-001 takes one text per call: one request per input, in order', async () => {
    cloud.on('google', 'gemini-embedding-001', 'predict', (req) => ({
      json: { predictions: [{ embeddings: { statistics: { truncated: false, token_count: 2 }, values: [(req.json.instances[0].content as string).length] } }] },
    }));
    const result = await provider().embedding!('gemini-embedding-001').doEmbed({ input: ['a', 'bb', 'ccc'] }, ctx);
    expect(result).to.deep.equal({ embeddings: [[1], [2], [3]], usage: { inputTokens: 6 } });
    expect(cloud.received('google', 'gemini-embedding-001', 'predict').map((r) => r.json)).to.deep.equal([
      { instances: [{ content: 'a' }] }, { instances: [{ content: 'bb' }] }, { instances: [{ content: 'ccc' }] },
    ]);
  });

  it('one token for many calls; a new one once it nears its expiry, and again after the fake expired it', async () => {
    cloud.on('google', 'gemini-2.5-flash', 'generateContent', { json: geminiGenerate });
    const vertex = provider();
    const call = () => vertex.chat!('gemini-2.5-flash').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
    await Promise.all([call(), call(), call()]);
    await call();
    expect(cloud.assertions, 'one exchange for four calls').to.have.length(1);

    // A token with under five minutes left is replaced before it is used.
    cloud.expiresIn = 301;
    const shortLived = provider();
    const shortCall = () => shortLived.chat!('gemini-2.5-flash').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
    await shortCall();
    await shortCall();
    expect(cloud.assertions).to.have.length(2);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await shortCall();
    expect(cloud.assertions).to.have.length(3);
    const bearers = cloud.received('google', 'gemini-2.5-flash', 'generateContent').map((r) => r.headers.authorization);
    expect(bearers).to.deep.equal([
      'Bearer ya29.fake-token-1', 'Bearer ya29.fake-token-1', 'Bearer ya29.fake-token-1', 'Bearer ya29.fake-token-1',
      'Bearer ya29.fake-token-2', 'Bearer ya29.fake-token-2', 'Bearer ya29.fake-token-3',
    ]);
  });

  it('VERTEX_CREDENTIALS_JSON with VERTEX_PROJECT, and VERTEX_TOKEN_URL over the key\'s token_uri', async () => {
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { json: geminiGenerate });
    const json = JSON.stringify(cloud.serviceAccount({ token_uri: 'https://oauth2.googleapis.com/token' }));
    const vertex = provider({ ...cloud.env(), VERTEX_CREDENTIALS_FILE: '', VERTEX_CREDENTIALS_JSON: json, VERTEX_PROJECT: 'gateway-test-project', VERTEX_TOKEN_URL: `${cloud.oauth.url}/token` });
    await vertex.chat!('gemini-2.5-pro').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
    expect(cloud.assertions).to.have.length(1);
    expect(cloud.received('google', 'gemini-2.5-pro', 'generateContent')).to.have.length(1);
  });

  it('a key the token endpoint refuses is a provider_auth_failed, nothing sent to Vertex', async () => {
    const { privateKey } = await import('node:crypto').then((crypto) => crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }));
    const stranger = JSON.stringify(cloud.serviceAccount({ private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }));
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { json: geminiGenerate });
    const vertex = provider({ ...cloud.env(), VERTEX_CREDENTIALS_FILE: '', VERTEX_CREDENTIALS_JSON: stranger });
    const error = await upstreamFailure(vertex.chat!('gemini-2.5-pro').doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx));
    expect([error.kind, error.code]).to.deep.equal(['caller_error', 'provider_auth_failed']);
    expect(error.message).to.contain('Invalid JWT Signature');
    expect(cloud.assertions).to.have.length(0);
    expect(cloud.received('google', 'gemini-2.5-pro', 'generateContent')).to.have.length(0);
  });

  it("maps Vertex's errors: 429 RESOURCE_EXHAUSTED rate-limited, 400 INVALID_ARGUMENT the caller's, 403 PERMISSION_DENIED the operator's", async () => {
    const vertex = provider();
    const chat = (model: string) => vertex.chat!(model).doGenerate({ messages: [{ role: 'user', content: 'hi' }] }, ctx);
    cloud.on('google', 'gemini-2.5-flash', 'generateContent', { status: 429, json: resourceExhausted });
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { status: 400, json: invalidArgument });
    cloud.on('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', { status: 403, json: permissionDenied });
    const throttled = await upstreamFailure(chat('gemini-2.5-flash'));
    expect([throttled.kind, throttled.upstreamStatus]).to.deep.equal(['rate_limited', 429]);
    const invalid = await upstreamFailure(chat('gemini-2.5-pro'));
    expect([invalid.kind, invalid.upstreamStatus, invalid.code]).to.deep.equal(['caller_error', 400, 'upstream_rejected_request']);
    expect(invalid.message).to.contain('empty contents field');
    const denied = await upstreamFailure(chat('claude-sonnet-4@20250514'));
    expect([denied.kind, denied.code]).to.deep.equal(['caller_error', 'provider_auth_failed']);
  });

  it('without a key or a project the provider is not configured; with neither file nor JSON nothing is read', () => {
    expect(provider({}).configured).to.equal(false);
    const noProject = JSON.stringify({ ...cloud.serviceAccount(), project_id: undefined });
    expect(provider({ VERTEX_CREDENTIALS_JSON: noProject }).configured).to.equal(false);
    expect(provider({ VERTEX_CREDENTIALS_JSON: noProject, VERTEX_PROJECT: 'another-project' }).configured).to.equal(true);
    expect(fs.existsSync(cloud.keyFile)).to.equal(true);
    expect(provider().configured).to.equal(true);
  });
});
