import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

describe('POST /v1/embeddings', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 20 });
  });
  after(() => gateway?.stop());

  it('embeds a string and a batch through the official client, with credits_used', async () => {
    const single = await tenant.client.embeddings.create({ model: 'sim-embed', input: 'a quiet lake', encoding_format: 'float' });
    expect(single.object).to.equal('list');
    expect(single.data).to.have.length(1);
    expect(single.data[0].object).to.equal('embedding');
    expect(single.data[0].embedding).to.have.length(256);
    expect(single.usage.prompt_tokens).to.be.greaterThan(0);
    expect((single as unknown as { credits_used: number }).credits_used).to.be.greaterThan(0);

    const batch = await tenant.client.embeddings.create({ model: 'sim-embed', input: ['one', 'two', 'three'], dimensions: 64, encoding_format: 'float' });
    expect(batch.data.map((d) => d.index)).to.deep.equal([0, 1, 2]);
    for (const d of batch.data) expect(d.embedding).to.have.length(64);
  });

  it('returns float32 little-endian base64 when asked', async () => {
    const res = await tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input: 'a quiet lake', encoding_format: 'base64' }) });
    const floats = ((await res.json()) as any).data[0].embedding as string;
    const viaFloat = await tenant.client.embeddings.create({ model: 'sim-embed', input: 'a quiet lake', encoding_format: 'float' });
    const bytes = Buffer.from(floats, 'base64');
    expect(bytes.length).to.equal(256 * 4);
    expect(bytes.readFloatLE(0)).to.be.closeTo(viaFloat.data[0].embedding[0], 1e-6);
  });

  it('embeds token ids, one input ([1,2,3]) or several ([[...],[...]]), counting each id as a token', async () => {
    const one = await tenant.client.embeddings.create({ model: 'sim-embed', input: [1734, 2048, 99], encoding_format: 'float' });
    expect(one.data).to.have.length(1);
    expect(one.usage.prompt_tokens).to.equal(3);
    const several = await tenant.client.embeddings.create({ model: 'sim-embed', input: [[1734, 2048, 99], [5, 6]], encoding_format: 'float' });
    expect(several.data.map((d) => d.index)).to.deep.equal([0, 1]);
    expect(several.data[0].embedding).to.deep.equal(one.data[0].embedding);
    expect(several.data[1].embedding).to.not.deep.equal(one.data[0].embedding);
    expect(several.usage.prompt_tokens).to.equal(5);
  });

  it('refuses token ids for models that take text only, and inputs that mix texts and ids', async () => {
    const post = (body: unknown) => tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const voyage = await post({ model: 'voyage-3.5', input: [[1, 2, 3]] });
    expect(voyage.status).to.equal(400);
    expect(((await voyage.json()) as any).error).to.include({ param: 'input', code: 'token_input_not_supported_by_model' });
    const mixed = await post({ model: 'sim-embed', input: ['text', [1, 2]] });
    expect(mixed.status).to.equal(400);
    expect(((await mixed.json()) as any).error).to.include({ param: 'input', code: 'invalid_type' });
    const negative = await post({ model: 'sim-embed', input: [1, -2] });
    expect(negative.status).to.equal(400);
  });

  it('refuses more than 2048 inputs, and dimensions where the model takes none', async () => {
    const tooMany = await tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input: Array.from({ length: 2049 }, (_, i) => `t${i}`) }) });
    expect(tooMany.status).to.equal(400);
    expect(((await tooMany.json()) as any).error.param).to.equal('input');
    const wide = await tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input: 'x', dimensions: 4096 }) });
    expect(wide.status).to.equal(400);
    expect(((await wide.json()) as any).error.param).to.equal('dimensions');
    try {
      await tenant.client.embeddings.create({ model: 'no-such-model', input: 'x' });
      expect.fail('expected a 404');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    }
  });

  it('records the client\'s own x-request-id with the usage', async () => {
    const res = await tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'client-trace-42' }, body: JSON.stringify({ model: 'sim-embed', input: 'traced' }) });
    expect(res.status).to.equal(200);
    const ours = res.headers.get('x-request-id')!;
    expect(ours).to.match(/^[0-9a-f-]{36}$/);
    const row = await gateway.runtime.db('usage_records').where({ request_id: ours }).first();
    expect(row.client_request_id).to.equal('client-trace-42');
    expect(row.endpoint).to.equal('embeddings');
    expect(Number(row.credits_micro)).to.be.greaterThan(0);
  });
});
