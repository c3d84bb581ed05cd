import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway, type Tenant } from '../support/gateway';

describe('GET /v1/models', function () {
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-configured' } });
    tenant = await gateway.newTenant();
  });
  after(() => gateway?.stop());

  it('lists the whole catalog through the official client', async () => {
    const models = [];
    for await (const m of tenant.client.models.list()) models.push(m);
    expect(models.length).to.be.within(140, 200);
    const gpt = models.find((m) => m.id === 'gpt-4o') as any;
    expect(gpt).to.include({ object: 'model', owned_by: 'openai', provider: 'openai', modality: 'chat', available: true });
    expect(gpt.created).to.be.a('number');
    expect(gpt.pricing.inputPerMTok).to.be.greaterThan(0);
    const claude = models.find((m) => m.id.startsWith('claude-')) as any;
    expect(claude.available).to.equal(false);
    expect(claude.unavailable_reason).to.contain('anthropic');
    for (const m of models.filter((m: any) => m.provider === 'simulated')) expect((m as any).available).to.equal(true);
  });

  it('filters by modality', async () => {
    for (const modality of ['chat', 'embedding', 'image', 'speech', 'transcription', 'video', 'music']) {
      const page = await tenant.client.models.list({ query: { modality } } as never);
      expect(page.data.length, modality).to.be.greaterThan(0);
      for (const m of page.data) expect((m as any).modality).to.equal(modality);
    }
    const res = await tenant.fetch('/v1/models?modality=hologram');
    expect(res.status).to.equal(400);
    expect(((await res.json()) as any).error.param).to.equal('modality');
  });

  it('retrieves one model with its allowedParams, and 404s an unknown slug', async () => {
    const dalle = (await tenant.client.models.retrieve('dall-e-3')) as any;
    expect(dalle.id).to.equal('dall-e-3');
    expect(dalle.allowedParams.supported_sizes).to.include('1792x1024');
    expect(dalle.allowedParams.n.max).to.equal(1);
    try {
      await tenant.client.models.retrieve('no-such-model');
      expect.fail('expected 404');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.NotFoundError);
      expect((err as any).error.code).to.equal('model_not_found');
    }
  });
});
