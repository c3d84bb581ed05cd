import { expect } from 'chai';
import { getBalance } from '../../../domain/ledger';
import { anthropicClient } from '../../support/anthropic';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { FakeGoogleCloud } from './fake-vertex';
import claudeMessage from './fixtures/claude-message.json';
import claudeStream from './fixtures/claude-stream.json';
import embedPredict from './fixtures/embed-predict.json';
import resourceExhausted from './fixtures/error-resource-exhausted.json';
import geminiGenerate from './fixtures/gemini-generate.json';
import geminiStream from './fixtures/gemini-stream.json';

const NO_VERTEX = { VERTEX_CREDENTIALS_FILE: '', VERTEX_CREDENTIALS_JSON: '', VERTEX_PROJECT: '', VERTEX_LOCATION: '', VERTEX_BASE_URL: '', VERTEX_TOKEN_URL: '' };

describe('Vertex AI through the gateway', function () {
  this.timeout(180_000);
  const cloud = new FakeGoogleCloud();
  let gateway: TestGateway;
  let bare: TestGateway;
  before(async () => {
    await cloud.start();
    gateway = await startTestGateway({ env: { ...NO_VERTEX, ...cloud.env() } });
    // No Vertex variables at all (whatever the machine's environment holds).
    bare = await startTestGateway({ env: NO_VERTEX });
  });
  after(async () => {
    await gateway?.stop();
    await bare?.stop();
    await cloud.stop();
  });

  const post = (tenant: Awaited<ReturnType<TestGateway['newTenant']>>, path: string, body: unknown) => tenant.fetch(path, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  it('a chat on vertex-gemini-2.5-pro reaches the project and region with the bearer, charged as its usage says', async () => {
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { json: geminiGenerate });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await post(tenant, '/v1/chat/completions', { model: 'vertex-gemini-2.5-pro', messages: [{ role: 'user', content: 'Capital of France?' }], max_tokens: 5000 });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.choices[0].message.content).to.equal('Paris is the capital of France.');
    expect(body.usage).to.include({ prompt_tokens: 2000, completion_tokens: 1000 });
    // 2000 x 125 + 1000 x 1000 credits per 1M tokens = 0.25 + 1.
    expect(res.headers.get('x-credits-used')).to.equal('1.25');
    expect(res.headers.get('x-model-used')).to.equal('vertex-gemini-2.5-pro');
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000 - 1_250_000);
    const [sent] = cloud.received('google', 'gemini-2.5-pro', 'generateContent');
    expect(sent.headers.authorization).to.match(/^Bearer ya29\.fake-token-\d+$/);
    expect(sent.json).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }], generationConfig: { maxOutputTokens: 5000 } });
  });

  it('streams vertex-gemini-2.5-flash, the last chunk carrying the usage and its credits', async () => {
    cloud.on('google', 'gemini-2.5-flash', 'streamGenerateContent', { sse: geminiStream });
    const tenant = await gateway.newTenant({ credits: 10 });
    const stream = await tenant.client.chat.completions.create({ model: 'vertex-gemini-2.5-flash', messages: [{ role: 'user', content: 'Tell me a story.' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      last = chunk;
    }
    expect(text).to.equal('Once upon a time.');
    expect(last.usage).to.include({ prompt_tokens: 1000, completion_tokens: 500 });
    // 1000 x 30 + 500 x 250 credits per 1M tokens.
    expect(last.usage.credits_used).to.equal(0.155);
    const [sent] = cloud.received('google', 'gemini-2.5-flash', 'streamGenerateContent');
    expect(sent.query.get('alt')).to.equal('sse');
    expect(sent.json).to.deep.equal({ contents: [{ role: 'user', parts: [{ text: 'Tell me a story.' }] }] });
  });

  it('a chat on vertex-claude-sonnet-4 goes to :rawPredict under publishers/anthropic, charged at Claude Sonnet 4 prices', async () => {
    cloud.on('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', { json: claudeMessage });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await post(tenant, '/v1/chat/completions', { model: 'vertex-claude-sonnet-4', messages: [{ role: 'user', content: 'Define "gateway".' }], max_tokens: 2000 });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.choices[0].message.content).to.equal('A gateway is a single entry point in front of many services.');
    // 3000 x 300 + 1000 x 1500 credits per 1M tokens = 0.9 + 1.5.
    expect(res.headers.get('x-credits-used')).to.equal('2.4');
    const [sent] = cloud.received('anthropic', 'claude-sonnet-4@20250514', 'rawPredict');
    expect(sent.json).to.deep.equal({ anthropic_version: 'vertex-2023-10-16', max_tokens: 2000, messages: [{ role: 'user', content: [{ type: 'text', text: 'Define "gateway".' }] }] });
  });

  it('streams vertex-claude-3-5-haiku through :streamRawPredict', async () => {
    cloud.on('anthropic', 'claude-3-5-haiku@20241022', 'streamRawPredict', { sse: claudeStream });
    const tenant = await gateway.newTenant({ credits: 10 });
    const stream = await tenant.client.chat.completions.create({ model: 'vertex-claude-3-5-haiku', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: any;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      last = chunk;
    }
    expect(text).to.equal('Hello from Vertex.');
    expect(last.usage).to.include({ prompt_tokens: 1000, completion_tokens: 500 });
    // 1000 x 80 + 500 x 400 credits per 1M tokens.
    expect(last.usage.credits_used).to.equal(0.28);
    const [sent] = cloud.received('anthropic', 'claude-3-5-haiku@20241022', 'streamRawPredict');
    expect(sent.json).to.deep.equal({ anthropic_version: 'vertex-2023-10-16', max_tokens: 1000, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true });
  });

  it('POST /v1/messages on vertex-claude-sonnet-4: the Messages request reaches :rawPredict, the answer in Anthropic\'s shape', async () => {
    cloud.on('anthropic', 'claude-sonnet-4@20250514', 'rawPredict', { json: claudeMessage });
    const tenant = await gateway.newTenant({ credits: 10 });
    const message = await anthropicClient(gateway.url, tenant.key).messages.create({
      model: 'vertex-claude-sonnet-4', max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: 'Define "gateway".' }],
    });
    expect(message.model).to.equal('vertex-claude-sonnet-4');
    expect(message.content).to.deep.equal([{ type: 'text', text: 'A gateway is a single entry point in front of many services.', citations: null }]);
    expect(message.usage).to.include({ input_tokens: 3000, output_tokens: 1000 });
    const sent = cloud.received('anthropic', 'claude-sonnet-4@20250514', 'rawPredict').at(-1)!;
    expect(sent.json).to.deep.equal({
      anthropic_version: 'vertex-2023-10-16', max_tokens: 300, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Define "gateway".' }] }],
    });
  });

  it('embeddings on vertex-text-embedding-005 through :predict, metered by the tokens Vertex counted', async () => {
    cloud.on('google', 'text-embedding-005', 'predict', { json: embedPredict });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await post(tenant, '/v1/embeddings', { model: 'vertex-text-embedding-005', input: ['The quick brown fox', 'jumps over'], dimensions: 3 });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.map((d: any) => d.embedding)).to.deep.equal([[0.0123, -0.0456, 0.0789], [-0.0321, 0.0654, -0.0987]]);
    expect(body.usage).to.include({ prompt_tokens: 10 });
    const [sent] = cloud.received('google', 'text-embedding-005', 'predict');
    expect(sent.json).to.deep.equal({ instances: [{ content: 'The quick brown fox' }, { content: 'jumps over' }], parameters: { outputDimensionality: 3 } });
  });

  it('one token serves every call of the gateway', () => {
    // Each test above made at least one call; the fake's endpoint verified and issued one token only.
    expect(cloud.assertions).to.have.length(1);
    expect(new Set(cloud.data.requests.map((r) => r.headers.authorization))).to.deep.equal(new Set(['Bearer ya29.fake-token-1']));
  });

  it("Vertex's 429 RESOURCE_EXHAUSTED is a 429 to the caller, nothing charged", async () => {
    cloud.on('google', 'gemini-2.5-pro', 'generateContent', { status: 429, json: resourceExhausted });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await post(tenant, '/v1/chat/completions', { model: 'vertex-gemini-2.5-pro', messages: [{ role: 'user', content: 'hi' }] });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(429);
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });

  it('without Vertex configuration the Vertex models answer 503 provider_not_configured', async () => {
    const tenant = await bare.newTenant({ credits: 10 });
    const res = await post(tenant, '/v1/chat/completions', { model: 'vertex-claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] });
    const body = (await res.json()) as any;
    expect([res.status, body.error?.code], JSON.stringify(body)).to.deep.equal([503, 'provider_not_configured']);
    expect((await getBalance(bare.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });
});
