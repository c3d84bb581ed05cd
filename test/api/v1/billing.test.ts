import { expect } from 'chai';
import { ledgerSum } from '../../../domain/ledger';
import { startTestGateway, type TestGateway } from '../../support/gateway';

describe('/v1/billing', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ worker: false });
  });
  after(() => gateway?.stop());

  const post = (tenant: { fetch: (p: string, i?: RequestInit) => Promise<Response> }, body: unknown, key?: string) => tenant.fetch('/v1/billing/topups', {
    method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body),
  });

  it('shows a billing admin the balance by source, the plan and the cycle spend', async () => {
    const tenant = await gateway.newTenant({ credits: 40, planId: 'pro' });
    const res = await tenant.fetch('/v1/billing/balance');
    expect(res.status).to.equal(200);
    const body = (await res.json()) as any;
    expect(body).to.deep.include({ object: 'billing.balance', workspace_id: tenant.workspaceId, balance: 40, plan_credits: 0, topup_credits: 40, spent_this_cycle: 0 });
    expect(body.cycle).to.match(/^\d{4}-\d{2}$/);
    expect(body.plan).to.deep.equal({ id: 'pro', name: 'Pro', monthly_credits: 10_000, rollover: true, rollover_cap: 5_000 });
  });

  it('adds topup credits once per Idempotency-Key', async () => {
    const tenant = await gateway.newTenant({ credits: 10, role: 'billing' });
    const first = await post(tenant, { credits: 25.5 }, 'topup-1');
    expect(first.status).to.equal(201);
    const created = (await first.json()) as any;
    expect(created).to.deep.include({ object: 'billing.topup', workspace_id: tenant.workspaceId, credits: 25.5, replayed: false, balance: 35.5, topup_credits: 35.5 });

    const again = await post(tenant, { credits: 25.5 }, 'topup-1');
    expect(again.status).to.equal(200);
    expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(await again.json()).to.deep.include({ id: created.id, replayed: true, balance: 35.5 });

    const other = await post(tenant, { credits: 1 }, 'topup-1');
    expect(other.status).to.equal(422);
    expect(((await other.json()) as any).error).to.deep.include({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });

    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums).to.deep.equal({ ledgerMicro: 35_500_000, bucketsMicro: 35_500_000 });
  });

  it('refuses a topup without Idempotency-Key or with a bad amount, in OpenAI\'s error shape', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const cases: Array<[unknown, string | undefined, string | null]> = [
      [{ credits: 5 }, undefined, 'Idempotency-Key'],
      [{ credits: 0 }, 'k1', 'credits'],
      [{ credits: -3 }, 'k2', 'credits'],
      [{ credits: '5' }, 'k3', 'credits'],
      [{ credits: 0.0000001 }, 'k4', 'credits'],
      [{}, 'k5', 'credits'],
      [{ credits: 5, currency: 'usd' }, 'k6', 'currency'],
    ];
    for (const [body, key, param] of cases) {
      const res = await post(tenant, body, key);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      const { error } = (await res.json()) as any;
      expect(Object.keys(error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
      expect(error.type).to.equal('invalid_request_error');
      expect(error.param, JSON.stringify(body)).to.equal(param);
    }
  });

  it('is for owner and billing keys only', async () => {
    for (const role of ['admin', 'developer', 'viewer'] as const) {
      const tenant = await gateway.newTenant({ credits: 1, role });
      for (const res of [await tenant.fetch('/v1/billing/balance'), await post(tenant, { credits: 5 }, `denied-${role}`)]) {
        expect(res.status, role).to.equal(403);
        expect(((await res.json()) as any).error).to.deep.include({ type: 'permission_error', code: 'insufficient_role' });
      }
    }
    const billing = await gateway.newTenant({ credits: 1, role: 'billing' });
    expect((await billing.fetch('/v1/billing/balance')).status).to.equal(200);
  });
});
