import { expect } from 'chai';
import { ledgerSum } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { paymentsEnv, startStripeMock, type StripeMock } from '../../support/stripe-mock';

const post = (tenant: Tenant, body: unknown, key?: string) => tenant.fetch('/v1/billing/topups', {
  method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body),
});

describe('/v1/billing', function () {
  this.timeout(120_000);

  describe('without a payment processor', () => {
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      gateway = await startTestGateway({ worker: false });
    });
    after(() => gateway?.stop());

    it('shows a billing admin the balance by source, the plan, the cycle spend, and that operators add credits', async () => {
      const tenant = await gateway.newTenant({ credits: 40, planId: 'pro' });
      const res = await tenant.fetch('/v1/billing/balance');
      expect(res.status).to.equal(200);
      const body = (await res.json()) as any;
      expect(body).to.deep.include({ object: 'billing.balance', workspace_id: tenant.workspaceId, balance: 40, plan_credits: 0, topup_credits: 40, spent_this_cycle: 0 });
      expect(body.cycle).to.match(/^\d{4}-\d{2}$/);
      expect(body.plan).to.deep.equal({ id: 'pro', name: 'Pro', monthly_credits: 10_000, rollover: true, rollover_cap: 5_000 });
      expect(body.topups).to.deep.equal({ enabled: false, added_by: 'operators' });
    });

    it('refuses self-serve top-ups with 403 payments_not_configured, adding nothing', async () => {
      const tenant = await gateway.newTenant({ credits: 10, role: 'billing' });
      for (const res of [
        await post(tenant, { credits: 1_000_000_000 }, 'topup-1'),
        await post(tenant, { credits: 500 }),
        await tenant.fetch('/v1/billing/auto-topup', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ enabled: true, threshold: 10, credits: 500 }) }),
      ]) {
        expect(res.status).to.equal(403);
        const { error } = (await res.json()) as any;
        expect(error).to.deep.include({ type: 'permission_error', code: 'payments_not_configured' });
        expect(error.message).to.match(/operators add credits/);
      }
      expect(await ledgerSum(gateway.runtime.db, tenant.workspaceId)).to.deep.equal({ ledgerMicro: 10_000_000, bucketsMicro: 10_000_000 });
      expect(await gateway.runtime.db('payments').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
    });

    it('is for owner and billing keys only', async () => {
      for (const role of ['admin', 'developer', 'viewer'] as const) {
        const tenant = await gateway.newTenant({ credits: 1, role });
        for (const res of [await tenant.fetch('/v1/billing/balance'), await tenant.fetch('/v1/billing/payments'), await post(tenant, { credits: 500 }, `denied-${role}`)]) {
          expect(res.status, role).to.equal(403);
          expect(((await res.json()) as any).error).to.deep.include({ type: 'permission_error', code: 'insufficient_role' });
        }
      }
      const billing = await gateway.newTenant({ credits: 1, role: 'billing' });
      expect((await billing.fetch('/v1/billing/balance')).status).to.equal(200);
    });
  });

  describe('with Stripe (stripe-mock)', () => {
    let mock: StripeMock;
    let gateway: TestGateway;
    before(async function () {
      this.timeout(180_000);
      mock = await startStripeMock();
      gateway = await startTestGateway({ worker: false, env: paymentsEnv(mock, { TOPUP_PRICE_PER_CREDIT: '1.25' }) });
    });
    after(async () => {
      await gateway?.stop();
      await mock?.stop();
    });

    it('states the terms: bounds, price per credit and currency', async () => {
      const tenant = await gateway.newTenant({ credits: 0 });
      const body = (await (await tenant.fetch('/v1/billing/balance')).json()) as any;
      expect(body.topups).to.deep.equal({ enabled: true, min_credits: 100, max_credits: 50_000, price_per_credit: 1.25, currency: 'usd', auto_topup_period_seconds: 86_400 });
    });

    it('starts a Checkout Session at the configured price, once per Idempotency-Key, crediting nothing yet', async () => {
      const tenant = await gateway.newTenant({ credits: 0, role: 'billing' });
      const first = await post(tenant, { credits: 101 }, 'buy-1');
      expect(first.status).to.equal(201);
      const created = (await first.json()) as any;
      // 101 credits at 1.25 cents: 126.25, rounded up to a whole cent.
      expect(created).to.deep.include({ object: 'billing.payment', kind: 'checkout', status: 'pending', credits: 101, amount: 127, currency: 'usd', credits_applied: 0, receipt_url: null });
      expect(created.id).to.match(/^pay_/);
      expect(created.checkout_url).to.match(/^https:\/\/checkout\.stripe\.com\//);
      const row = await gateway.runtime.db('payments').where({ id: created.id }).first();
      expect(row.checkout_session_id).to.match(/^cs_test_/);
      expect(await gateway.runtime.db('workspace_billing').where({ workspace_id: tenant.workspaceId }).first('stripe_customer_id')).to.have.property('stripe_customer_id').that.matches(/^cus_/);

      const again = await post(tenant, { credits: 101 }, 'buy-1');
      expect(again.status).to.equal(200);
      expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
      expect(((await again.json()) as any).id).to.equal(created.id);
      const other = await post(tenant, { credits: 102 }, 'buy-1');
      expect(other.status).to.equal(422);
      expect(((await other.json()) as any).error).to.deep.include({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });

      expect(await gateway.runtime.db('payments').where({ workspace_id: tenant.workspaceId }).count({ n: '*' })).to.deep.equal([{ n: 1 }]);
      expect(await ledgerSum(gateway.runtime.db, tenant.workspaceId)).to.deep.equal({ ledgerMicro: 0, bucketsMicro: 0 });
      const list = (await (await tenant.fetch('/v1/billing/payments')).json()) as any;
      expect(list.data.map((p: any) => [p.id, p.status])).to.deep.equal([[created.id, 'pending']]);
      const audit = await gateway.runtime.db('audit_log').where({ workspace_id: tenant.workspaceId, action: 'payment.checkout' }).first('actor', 'data');
      expect(audit.actor).to.equal(`key:${tenant.keyId}`);
      expect(audit.data).to.deep.include({ credits: 101, amount: 127, currency: 'usd' });
    });

    it('refuses amounts outside the bounds, fractions, and a missing Idempotency-Key, in OpenAI\'s error shape', async () => {
      const tenant = await gateway.newTenant({ credits: 0 });
      const cases: Array<[unknown, string | undefined, string]> = [
        [{ credits: 500 }, undefined, 'Idempotency-Key'],
        [{ credits: 99 }, 'k1', 'credits'],
        [{ credits: 50_001 }, 'k2', 'credits'],
        [{ credits: 150.5 }, 'k3', 'credits'],
        [{ credits: 0 }, 'k4', 'credits'],
        [{ credits: -3 }, 'k5', 'credits'],
        [{ credits: '500' }, 'k6', 'credits'],
        [{}, 'k7', 'credits'],
        [{ credits: 500, currency: 'eur' }, 'k8', 'currency'],
        [{ credits: 1e20 }, 'k9', 'credits'],
      ];
      for (const [body, key, param] of cases) {
        const res = await post(tenant, body, key);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        const { error } = (await res.json()) as any;
        expect(Object.keys(error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
        expect(error.type).to.equal('invalid_request_error');
        expect(error.param, JSON.stringify(body)).to.equal(param);
      }
      const bounds = (await (await post(tenant, { credits: 99 }, 'k10')).json()) as any;
      expect(bounds.error).to.deep.include({ code: 'invalid_value' });
      expect(bounds.error.message).to.contain('from 100 to 50000');
      expect(await gateway.runtime.db('payments').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
    });

    it('turns automatic top-ups on only with a saved card, within the bounds', async () => {
      const tenant = await gateway.newTenant({ credits: 0 });
      const put = (body: unknown) => tenant.fetch('/v1/billing/auto-topup', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const noCard = await put({ enabled: true, threshold: 50, credits: 500 });
      expect(noCard.status).to.equal(409);
      expect(((await noCard.json()) as any).error.code).to.equal('no_saved_payment_method');
      await gateway.runtime.db('workspace_billing').insert({ workspace_id: tenant.workspaceId, stripe_customer_id: 'cus_x', payment_method_id: 'pm_x' });
      const tooMuch = await put({ enabled: true, threshold: 50, credits: 50_001 });
      expect(tooMuch.status).to.equal(400);
      const on = await put({ enabled: true, threshold: 50, credits: 500 });
      expect(on.status).to.equal(200);
      expect(await on.json()).to.deep.include({ enabled: true, threshold: 50, credits: 500, payment_method: 'saved card', last_failure: null });
      const off = await put({ enabled: false });
      expect(await off.json()).to.deep.include({ enabled: false, threshold: 50, credits: 500 });
    });
  });
});
