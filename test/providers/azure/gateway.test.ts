import { expect } from 'chai';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { API_VERSION, AZURE_KEY, FakeAzure } from './fake-azure';
import completion from './fixtures/chat-completion.json';
import contentFilterError from './fixtures/content-filter-error.json';

describe('Azure OpenAI through the gateway', function () {
  this.timeout(180_000);
  const azure = new FakeAzure();
  let gateway: TestGateway;
  let bare: TestGateway;
  before(async () => {
    await azure.start();
    gateway = await startTestGateway({ env: azure.env('key') });
    // No Azure variables at all (whatever the machine's environment holds).
    bare = await startTestGateway({ env: { AZURE_OPENAI_ENDPOINT: '', AZURE_OPENAI_API_KEY: '', AZURE_TENANT_ID: '', AZURE_CLIENT_ID: '', AZURE_CLIENT_SECRET: '' } });
  });
  after(async () => {
    await gateway?.stop();
    await bare?.stop();
    await azure.stop();
  });

  it('a chat on azure-gpt-4o reaches the deployment and is charged exactly as its usage says', async () => {
    azure.on('gpt-4o', 'chat/completions', { json: completion });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'Define "gateway".' }], max_tokens: 2000 }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.choices[0].message.content).to.equal('A gateway is a single entry point in front of many services.');
    expect(body.usage).to.include({ prompt_tokens: 3000, completion_tokens: 1200 });
    // 3000 x 250 + 1200 x 1000 credits per 1M tokens = 0.75 + 1.2 credits.
    expect(res.headers.get('x-credits-used')).to.equal('1.95');
    expect(res.headers.get('x-model-used')).to.equal('azure-gpt-4o');
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000 - 1_950_000);
    const [sent] = azure.received('gpt-4o', 'chat/completions');
    expect(sent.headers['api-key']).to.equal(AZURE_KEY);
    expect(sent.query.get('api-version')).to.equal(API_VERSION);
    expect(sent.json).to.deep.equal({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Define "gateway".' }], max_tokens: 2000 });
  });

  it("Azure's content-filter refusal is a 400 content_filtered in OpenAI's error shape, nothing charged", async () => {
    azure.on('gpt-4o', 'chat/completions', { status: 400, json: contentFilterError });
    const tenant = await gateway.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'something violent' }] }),
    });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).to.equal(400);
    expect(body.error).to.include({ type: 'invalid_request_error', code: 'content_filtered' });
    expect(body.error.message).to.contain('content filter (violence: high)');
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });

  it('with Entra ID instead of a key: the bearer its authority issued reaches the deployment, one token for several calls', async () => {
    const entraGateway = await startTestGateway({ env: { ...azure.env('entra'), AZURE_OPENAI_API_KEY: '' } });
    try {
      azure.data.reset();
      azure.authority.tokenRequests.length = 0;
      azure.on('gpt-4o', 'chat/completions', { json: completion });
      const tenant = await entraGateway.newTenant({ credits: 10 });
      for (let i = 0; i < 2; i++) {
        const res = await tenant.fetch('/v1/chat/completions', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.status, await res.clone().text()).to.equal(200);
        expect(res.headers.get('x-credits-used')).to.equal('1.95');
      }
      expect(azure.authority.tokenRequests).to.have.length(1);
      expect(azure.received('gpt-4o', 'chat/completions').map((sent) => [sent.headers.authorization, sent.headers['api-key']]))
        .to.deep.equal([['Bearer entra-token-1', undefined], ['Bearer entra-token-1', undefined]]);
    } finally {
      await entraGateway.stop();
    }
  });

  it('without Azure configuration the Azure models answer 503 provider_not_configured', async () => {
    const tenant = await bare.newTenant({ credits: 10 });
    const res = await tenant.fetch('/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'azure-gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as any;
    expect([res.status, body.error?.code], JSON.stringify(body)).to.deep.equal([503, 'provider_not_configured']);
    expect((await getBalance(bare.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });
});
