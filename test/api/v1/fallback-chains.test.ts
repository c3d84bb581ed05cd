import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../../support/gateway';

describe('/v1/fallback-chains', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
  });
  after(() => gateway?.stop());

  it('lets a workspace admin set, list and remove a chain that then routes requests', async () => {
    const admin = await gateway.newTenant({ role: 'admin' });
    const put = await admin.fetch('/v1/fallback-chains/sim-chat-fail-429', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: ['sim-chat-fail-500', 'sim-chat-mini'] }) });
    expect(put.status).to.equal(200);
    expect(await put.json()).to.deep.equal({ object: 'fallback_chain', model: 'sim-chat-fail-429', chain: ['sim-chat-fail-500', 'sim-chat-mini'] });

    const list = (await (await admin.fetch('/v1/fallback-chains')).json()) as any;
    expect(list.data).to.deep.equal([{ object: 'fallback_chain', model: 'sim-chat-fail-429', chain: ['sim-chat-fail-500', 'sim-chat-mini'] }]);

    const { response } = await admin.client.chat.completions.create({ model: 'sim-chat-fail-429', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get('x-model-used')).to.equal('sim-chat-mini');
    expect(response.headers.get('x-fallback-depth')).to.equal('2');

    const del = await admin.fetch('/v1/fallback-chains/sim-chat-fail-429', { method: 'DELETE' });
    expect(((await del.json()) as any).deleted).to.equal(true);
    expect(((await (await admin.fetch('/v1/fallback-chains')).json()) as any).data).to.deep.equal([]);
  });

  it('refuses other roles, unknown models and self-references', async () => {
    const developer = await gateway.newTenant({ role: 'developer' });
    const denied = await developer.fetch('/v1/fallback-chains/sim-chat', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: ['sim-chat-mini'] }) });
    expect(denied.status).to.equal(403);
    expect(((await denied.json()) as any).error.code).to.equal('insufficient_role');

    const owner = await gateway.newTenant({ role: 'owner' });
    const unknown = await owner.fetch('/v1/fallback-chains/sim-chat', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: ['nope-model'] }) });
    expect(unknown.status).to.equal(400);
    expect(((await unknown.json()) as any).error.code).to.equal('model_not_found');
    const self = await owner.fetch('/v1/fallback-chains/sim-chat', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: ['sim-chat'] }) });
    expect(self.status).to.equal(400);
  });
});
