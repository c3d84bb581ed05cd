import { expect } from 'chai';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { ACCESS_KEY_ID, eventStream, FakeBedrock, type StreamEvent } from './fake-bedrock';
import cohereEmbedding from './fixtures/cohere-embedding.json';
import streamText from './fixtures/converse-stream-text.json';
import converseText from './fixtures/converse-text.json';

const CLAUDE = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const NO_BEDROCK: NodeJS.ProcessEnv = {
  BEDROCK_REGION: '', BEDROCK_BASE_URL: '', BEDROCK_ACCESS_KEY_ID: '', BEDROCK_SECRET_ACCESS_KEY: '', BEDROCK_SESSION_TOKEN: '',
  BEDROCK_ROLE_ARN: '', BEDROCK_ROLE_SESSION_NAME: '', BEDROCK_ROLE_EXTERNAL_ID: '', BEDROCK_STS_ENDPOINT: '',
};

describe('AWS Bedrock through the gateway', function () {
  this.timeout(180_000);
  const bedrock = new FakeBedrock();
  let gateway: TestGateway;
  let bare: TestGateway;
  before(async () => {
    await bedrock.start();
    gateway = await startTestGateway({ env: { ...NO_BEDROCK, ...bedrock.env('keys') } });
    // No Bedrock variables at all (whatever the machine's environment holds).
    bare = await startTestGateway({ env: NO_BEDROCK });
  });
  afterEach(() => bedrock.reset());
  after(async () => {
    await gateway?.stop();
    await bare?.stop();
    await bedrock.stop();
  });

  it('POST /v1/chat/completions on bedrock-claude-3-5-sonnet: one signed Converse call, charged exactly as its usage says', async () => {
    bedrock.on(CLAUDE, 'converse', { json: converseText });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bedrock-claude-3-5-sonnet', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Define "gateway".' }], max_tokens: 2000, temperature: 0.3 }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.choices[0].message.content).to.equal('A gateway is a single entry point in front of many services.');
    expect(body.choices[0].finish_reason).to.equal('stop');
    expect(body.usage).to.include({ prompt_tokens: 3000, completion_tokens: 1200 });
    // 3000 x 300 + 1200 x 1500 credits per 1M tokens = 0.9 + 1.8 credits.
    expect(res.headers.get('x-credits-used')).to.equal('2.7');
    expect(res.headers.get('x-model-used')).to.equal('bedrock-claude-3-5-sonnet');
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000 - 2_700_000);
    const [sent] = bedrock.received(CLAUDE, 'converse');
    expect(sent.json).to.deep.equal({
      messages: [{ role: 'user', content: [{ text: 'Define "gateway".' }] }], system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 2000, temperature: 0.3 },
    });
    expect(bedrock.verified.map((v) => v.credentials.accessKeyId)).to.deep.equal([ACCESS_KEY_ID]);
  });

  it('streamed: ConverseStream\'s frames as chat.completion.chunk events, the usage chunk and the charge', async () => {
    bedrock.on(CLAUDE, 'converse-stream', eventStream(streamText as StreamEvent[]));
    const tenant = await gateway.newTenant({ credits: 10 });
    const stream = await tenant.client.chat.completions.create({
      model: 'bedrock-claude-3-5-sonnet', messages: [{ role: 'user', content: 'Define "gateway".' }], stream: true, stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let last: any = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      last = chunk;
    }
    expect(text).to.equal('A gateway is a single entry point.');
    expect(finish).to.equal('stop');
    expect(last.usage).to.include({ prompt_tokens: 3000, completion_tokens: 1200, credits_used: 2.7 });
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000 - 2_700_000);
    expect(bedrock.received(CLAUDE, 'converse-stream')[0].json).to.deep.equal({ messages: [{ role: 'user', content: [{ text: 'Define "gateway".' }] }] });
  });

  it('POST /v1/embeddings on bedrock-cohere-embed-english-v3: InvokeModel\'s vectors and Bedrock\'s token count', async () => {
    bedrock.on('cohere.embed-english-v3', 'invoke', { headers: { 'x-amzn-bedrock-input-token-count': '50000' }, json: cohereEmbedding });
    const tenant = await gateway.newTenant({ credits: 10 });
    const { data, response } = await tenant.client.embeddings.create({ model: 'bedrock-cohere-embed-english-v3', input: ['the gateway', 'a second text'], encoding_format: 'float' }).withResponse();
    expect(data.data.map((d) => d.embedding)).to.deep.equal(cohereEmbedding.embeddings.float);
    expect(data.usage.prompt_tokens).to.equal(50000);
    // 50000 x 10 credits per 1M tokens.
    expect(response.headers.get('x-credits-used')).to.equal('0.5');
    expect(bedrock.received('cohere.embed-english-v3', 'invoke').map((r) => r.json)).to.deep.equal([
      { texts: ['the gateway', 'a second text'], input_type: 'search_document', embedding_types: ['float'] },
    ]);
  });

  it('with a role: the call is signed with the credentials the fake STS issued', async () => {
    const roleGateway = await startTestGateway({ env: { ...NO_BEDROCK, ...bedrock.env('role') } });
    try {
      bedrock.on(CLAUDE, 'converse', { json: converseText });
      const tenant = await roleGateway.newTenant({ credits: 10 });
      const res = await tenant.fetch('/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'bedrock-claude-3-5-sonnet', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status, await res.clone().text()).to.equal(200);
      expect(bedrock.assumed).to.have.length(1);
      expect(bedrock.verified.map((v) => v.credentials.accessKeyId)).to.deep.equal(['ASIAFAKESTS000000001']);
    } finally {
      await roleGateway.stop();
    }
  });

  it('Bedrock\'s throttling is a 429 to the caller once retries are spent, nothing charged', async () => {
    bedrock.on(CLAUDE, 'converse', { status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, json: { message: 'Too many requests, please wait before trying again.' } });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bedrock-claude-3-5-sonnet', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as any;
    expect([res.status, body.error?.type], JSON.stringify(body)).to.deep.equal([429, 'rate_limit_error']);
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });

  it('without BEDROCK_REGION the Bedrock models answer 503 provider_not_configured', async () => {
    const tenant = await bare.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bedrock-llama-3-1-70b', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as any;
    expect([res.status, body.error?.code], JSON.stringify(body)).to.deep.equal([503, 'provider_not_configured']);
  });
});
