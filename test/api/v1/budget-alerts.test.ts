import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';

describe('/v1/budget/alerts', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ worker: false });
  });
  after(() => gateway?.stop());

  const create = (tenant: Tenant, body: unknown) => tenant.fetch('/v1/budget/alerts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const valid = { threshold_type: 'percent', threshold: 80, channels: { email: { to: ['ops@example.com'] }, webhook: { url: 'https://93.184.215.14/services/T0/B0/x' } } };

  it('creates, lists and deletes a workspace\'s alerts', async () => {
    const tenant = await gateway.newTenant({ planId: 'pro' });
    const res = await create(tenant, valid);
    expect(res.status).to.equal(201);
    const alert = (await res.json()) as any;
    expect(alert.id).to.match(/^alert_/);
    expect(alert).to.deep.include({ object: 'budget_alert', workspace_id: tenant.workspaceId, threshold_type: 'percent', threshold: 80, enabled: true, channels: valid.channels });
    const credits = (await (await create(tenant, { threshold_type: 'credits', threshold: 1234.5, channels: { email: { to: ['a@b.co'] } } })).json()) as any;
    expect(credits).to.deep.include({ threshold_type: 'credits', threshold: 1234.5 });

    const list = (await (await tenant.fetch('/v1/budget/alerts')).json()) as any;
    expect(list.object).to.equal('list');
    expect(list.data.map((a: any) => a.id)).to.deep.equal([alert.id, credits.id]);

    const del = await tenant.fetch(`/v1/budget/alerts/${alert.id}`, { method: 'DELETE' });
    expect(del.status).to.equal(200);
    expect(await del.json()).to.deep.equal({ id: alert.id, object: 'budget_alert', deleted: true });
    expect(((await (await tenant.fetch('/v1/budget/alerts')).json()) as any).data.map((a: any) => a.id)).to.deep.equal([credits.id]);
    expect((await tenant.fetch(`/v1/budget/alerts/${alert.id}`, { method: 'DELETE' })).status).to.equal(404);
  });

  it('keeps each workspace\'s alerts to itself', async () => {
    const a = await gateway.newTenant();
    const b = await gateway.newTenant();
    const alert = (await (await create(a, valid)).json()) as any;
    expect(((await (await b.fetch('/v1/budget/alerts')).json()) as any).data).to.deep.equal([]);
    const res = await b.fetch(`/v1/budget/alerts/${alert.id}`, { method: 'DELETE' });
    expect(res.status).to.equal(404);
    expect(((await res.json()) as any).error.code).to.equal('budget_alert_not_found');
  });

  it('refuses malformed alerts with the parameter at fault', async () => {
    const tenant = await gateway.newTenant();
    const cases: Array<[unknown, string]> = [
      [{ ...valid, threshold_type: 'dollars' }, 'threshold_type'],
      [{ ...valid, threshold: 80.5 }, 'threshold'],
      [{ ...valid, threshold: 0 }, 'threshold'],
      [{ ...valid, threshold: 5000 }, 'threshold'],
      [{ ...valid, channels: {} }, 'channels'],
      [{ ...valid, channels: { sms: { to: '+1555' } } }, 'channels.sms'],
      [{ ...valid, channels: { email: { to: ['not-an-address'] } } }, 'channels.email.to[0]'],
      [{ ...valid, channels: { webhook: { url: 'ftp://example.com/hook' } } }, 'channels.webhook.url'],
      [{ threshold_type: 'credits', threshold: 10 }, 'channels'],
    ];
    for (const [body, param] of cases) {
      const res = await create(tenant, body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      const { error } = (await res.json()) as any;
      expect(error.type).to.equal('invalid_request_error');
      expect(error.param, JSON.stringify(body)).to.equal(param);
    }
  });

  it('is for owner, admin and billing keys', async () => {
    for (const role of ['owner', 'admin', 'billing'] as const) {
      const tenant = await gateway.newTenant({ role });
      expect((await create(tenant, valid)).status, role).to.equal(201);
    }
    for (const role of ['developer', 'viewer'] as const) {
      const tenant = await gateway.newTenant({ role });
      for (const res of [await create(tenant, valid), await tenant.fetch('/v1/budget/alerts')]) {
        expect(res.status, role).to.equal(403);
        expect(((await res.json()) as any).error).to.deep.include({ type: 'permission_error', code: 'insufficient_role' });
      }
    }
  });
});
