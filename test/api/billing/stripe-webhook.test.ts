import { expect } from 'chai';
import { getBalance, ledgerSum, reserve, settle } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { deliver, paymentsEnv, randomId, startStripeMock, stripeEvent, stripeObjects, type RecordedPayment, type StripeMock } from '../../support/stripe-mock';

describe('Stripe webhooks: credits arrive once, and leave on refunds and disputes', function () {
  this.timeout(120_000);
  let mock: StripeMock;
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    mock = await startStripeMock();
    gateway = await startTestGateway({ worker: false, env: paymentsEnv(mock) });
  });
  after(async () => {
    await gateway?.stop();
    await mock?.stop();
  });

  const db = () => gateway.runtime.db;
  const balanceOf = async (t: Tenant) => getBalance(db(), t.workspaceId);
  const send = (event: Record<string, unknown>) => deliver(gateway.url, event);

  /** Buys `credits` through the API (a Checkout Session on stripe-mock), returning what the gateway recorded. */
  async function buy(tenant: Tenant, credits: number): Promise<RecordedPayment> {
    const res = await tenant.fetch('/v1/billing/topups', {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': randomId('k') }, body: JSON.stringify({ credits }),
    });
    expect(res.status, await res.clone().text()).to.equal(201);
    const payment = (await res.json()) as { id: string; amount: number; status: string };
    expect(payment.status).to.equal('pending');
    const row = await db()('payments').where({ id: payment.id }).first();
    return { id: payment.id, workspaceId: tenant.workspaceId, sessionId: row.checkout_session_id, amount: payment.amount, paymentIntentId: randomId('pi') };
  }

  async function ledgerOf(t: Tenant): Promise<Array<{ kind: string; amount_micro: number; idempotency_key: string }>> {
    const rows = await db()('credit_ledger').where({ workspace_id: t.workspaceId }).orderBy('id').select('kind', 'amount_micro', 'idempotency_key');
    return rows.map((r) => ({ ...r, amount_micro: Number(r.amount_micro) }));
  }

  async function expectBooksBalanced(t: Tenant): Promise<void> {
    const sums = await ledgerSum(db(), t.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  }

  async function paymentStatus(t: Tenant, id: string): Promise<Record<string, unknown>> {
    const list = (await (await t.fetch('/v1/billing/payments')).json()) as { data: Array<Record<string, unknown>> };
    return list.data.find((p) => p.id === id)!;
  }

  async function spend(t: Tenant, credits: number): Promise<void> {
    const reservationId = randomId('spend');
    await reserve(db(), { reservationId, workspaceId: t.workspaceId, amountMicro: credits * 1_000_000 });
    await settle(db(), { reservationId, chargeMicro: credits * 1_000_000 });
  }

  it('credits a paid checkout exactly once, whatever the number and kind of deliveries', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const p = await buy(tenant, 1500);
    expect(p.amount).to.equal(1500);
    expect((await balanceOf(tenant)).totalMicro, 'nothing before the webhook').to.equal(0);

    const completed = stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(p));
    const first = await send(completed);
    expect(first.status).to.equal(200);
    expect(await first.json()).to.include({ received: true, outcome: 'applied' });
    for (let i = 0; i < 3; i++) {
      const again = await send(completed);
      expect(again.status).to.equal(200);
      expect(((await again.json()) as { outcome: string }).outcome).to.equal('duplicate');
    }
    const succeeded = stripeEvent('payment_intent.succeeded', stripeObjects.paymentIntent(p));
    await send(succeeded);
    await send(succeeded);
    await send(stripeEvent('charge.succeeded', stripeObjects.charge(p)));

    expect((await balanceOf(tenant)).totalMicro).to.equal(1500_000_000);
    expect(await ledgerOf(tenant)).to.deep.equal([{ kind: 'topup', amount_micro: 1500_000_000, idempotency_key: `stripe:${p.paymentIntentId}` }]);
    expect(await paymentStatus(tenant, p.id)).to.deep.include({ status: 'succeeded', credits: 1500, credits_applied: 1500, amount: 1500, currency: 'usd', receipt_url: `https://pay.stripe.com/receipts/payment/${p.paymentIntentId}` });
    const audit = await db()('audit_log').where({ workspace_id: tenant.workspaceId, subject_id: p.id }).orderBy('id').pluck('action');
    expect(audit).to.deep.equal(['payment.checkout', 'payment.succeeded']);
    // The card is kept for automatic top-ups.
    expect(await db()('workspace_billing').where({ workspace_id: tenant.workspaceId }).first()).to.include({ payment_method_id: 'pm_test_card', payment_method_label: 'visa •••• 4242' });
    await expectBooksBalanced(tenant);
  });

  it('credits a payment whose payment_intent.succeeded comes first, once', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const p = await buy(tenant, 200);
    await send(stripeEvent('payment_intent.succeeded', stripeObjects.paymentIntent(p)));
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(p)));
    expect(await ledgerOf(tenant)).to.deep.equal([{ kind: 'topup', amount_micro: 200_000_000, idempotency_key: `stripe:${p.paymentIntentId}` }]);
  });

  it('refuses forged, unsigned, tampered and stale deliveries, changing nothing', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const p = await buy(tenant, 300);
    const event = stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(p));
    const cases: Array<[string, Promise<Response>, string]> = [
      ['forged (another secret)', deliver(gateway.url, event, { secret: 'whsec_notthegatewaysecret' }), 'invalid_signature'],
      ['unsigned', deliver(gateway.url, event, { signature: null }), 'missing_signature'],
      ['garbage signature', deliver(gateway.url, event, { signature: 't=1,v1=deadbeef' }), 'invalid_signature'],
      ['stale (signed an hour ago)', deliver(gateway.url, event, { timestamp: Math.floor(Date.now() / 1000) - 3600 }), 'invalid_signature'],
    ];
    for (const [label, pending, code] of cases) {
      const res = await pending;
      expect(res.status, label).to.equal(400);
      expect(((await res.json()) as { error: { code: string } }).error.code, label).to.equal(code);
    }
    // Signed, then changed on the way (the amount): the signature no longer matches.
    const payload = JSON.stringify(event);
    const { default: Stripe } = await import('stripe');
    const header = new Stripe('sk_test_x').webhooks.generateTestHeaderString({ payload, secret: paymentsEnv(mock).STRIPE_WEBHOOK_SECRET! });
    const tampered = await fetch(`${gateway.url}/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload.replace('"amount_total":300', '"amount_total":30000') });
    expect(tampered.status).to.equal(400);

    expect(await ledgerOf(tenant)).to.deep.equal([]);
    expect(await db()('stripe_events').where({ id: event.id }).first()).to.equal(undefined);
    expect((await paymentStatus(tenant, p.id)).status).to.equal('pending');
  });

  it('applies a refund delivered before its payment when the payment comes (out of order)', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const full = await buy(tenant, 400);
    const early = await send(stripeEvent('charge.refunded', stripeObjects.charge(full, 400)));
    expect(((await early.json()) as { outcome: string }).outcome).to.equal('waiting');
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(full)));
    await send(stripeEvent('payment_intent.succeeded', stripeObjects.paymentIntent(full)));
    expect(await ledgerOf(tenant), 'a payment refunded in full never credits').to.deep.equal([]);
    expect(await paymentStatus(tenant, full.id)).to.deep.include({ status: 'refunded', credits_applied: 0, amount_refunded: 400 });

    const partial = await buy(tenant, 1000);
    await send(stripeEvent('charge.refunded', stripeObjects.charge(partial, 250)));
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(partial)));
    expect((await balanceOf(tenant)).totalMicro).to.equal(750_000_000);
    expect(await paymentStatus(tenant, partial.id)).to.deep.include({ status: 'partially_refunded', credits_applied: 750 });
    await expectBooksBalanced(tenant);
  });

  it('takes refunded credits back, as debt where they were spent, once per refund', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const p = await buy(tenant, 1000);
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(p)));
    await spend(tenant, 700);
    expect((await balanceOf(tenant)).totalMicro).to.equal(300_000_000);

    const partly = stripeEvent('charge.refunded', stripeObjects.charge(p, 200));
    await send(partly);
    await send(partly);
    expect((await balanceOf(tenant)).totalMicro).to.equal(100_000_000);

    const fully = stripeEvent('charge.refunded', stripeObjects.charge(p, 1000));
    await send(fully);
    await send(fully);
    // The older (partial) delivery arriving again, late, changes nothing: refunds are cumulative.
    await send(stripeEvent('charge.refunded', stripeObjects.charge(p, 200)));
    const balance = await balanceOf(tenant);
    expect(balance).to.deep.equal({ totalMicro: -700_000_000, planMicro: 0, topupMicro: 0, debtMicro: 700_000_000 });
    const rows = (await ledgerOf(tenant)).filter((r) => r.kind === 'adjust').map((r) => r.amount_micro);
    expect(rows).to.deep.equal([-200_000_000, -100_000_000, -700_000_000]);
    expect(await paymentStatus(tenant, p.id)).to.deep.include({ status: 'refunded', credits_applied: 0 });
    expect(await db()('audit_log').where({ workspace_id: tenant.workspaceId, subject_id: p.id, action: 'payment.refunded' }).count({ n: '*' })).to.deep.equal([{ n: 3 }]);
    await expectBooksBalanced(tenant);

    // The next purchase pays the debt first.
    const next = await buy(tenant, 1000);
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(next)));
    expect(await balanceOf(tenant)).to.deep.equal({ totalMicro: 300_000_000, planMicro: 0, topupMicro: 300_000_000, debtMicro: 0 });
    await expectBooksBalanced(tenant);
  });

  it('takes credits back while a dispute is open, gives them back when it is won, keeps them when it is lost', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const won = await buy(tenant, 500);
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(won)));
    const opened = stripeEvent('charge.dispute.created', stripeObjects.dispute(won, 'needs_response'));
    await send(opened);
    await send(opened);
    expect((await balanceOf(tenant)).totalMicro).to.equal(0);
    expect((await paymentStatus(tenant, won.id)).status).to.equal('disputed');
    const closedWon = stripeEvent('charge.dispute.closed', stripeObjects.dispute(won, 'won'));
    await send(closedWon);
    await send(closedWon);
    expect((await balanceOf(tenant)).totalMicro).to.equal(500_000_000);
    expect((await paymentStatus(tenant, won.id)).status).to.equal('dispute_won');

    const lost = await buy(tenant, 300);
    await send(stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(lost)));
    await spend(tenant, 600);
    // Closed (lost) delivered before its "created": the late "created" does not reopen it.
    await send(stripeEvent('charge.dispute.closed', stripeObjects.dispute(lost, 'lost')));
    await send(stripeEvent('charge.dispute.created', stripeObjects.dispute(lost, 'needs_response')));
    expect(await balanceOf(tenant)).to.deep.equal({ totalMicro: -100_000_000, planMicro: 0, topupMicro: 0, debtMicro: 100_000_000 });
    expect(await paymentStatus(tenant, lost.id)).to.deep.include({ status: 'dispute_lost', credits_applied: 0 });
    const actions = await db()('audit_log').where({ workspace_id: tenant.workspaceId }).whereLike('action', 'payment.dispute%').orderBy('id').pluck('action');
    expect(actions).to.deep.equal(['payment.dispute_opened', 'payment.dispute_won', 'payment.dispute_lost', 'payment.dispute_opened']);
    await expectBooksBalanced(tenant);
  });

  it('credits nothing when Stripe reports another amount than the payment was made for', async () => {
    const tenant = await gateway.newTenant({ credits: 0 });
    const p = await buy(tenant, 100);
    await send(stripeEvent('checkout.session.completed', { ...stripeObjects.checkoutSession(p), amount_total: 1 }));
    expect(await ledgerOf(tenant)).to.deep.equal([]);
    expect((await paymentStatus(tenant, p.id)).status).to.equal('failed');
  });

  it('ignores events about payments that are not the gateway\'s', async () => {
    const res = await send(stripeEvent('checkout.session.completed', { id: 'cs_test_elsewhere', object: 'checkout.session', payment_status: 'paid', amount_total: 5, currency: 'usd', metadata: {} }));
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { outcome: string }).outcome).to.equal('ignored');
  });
});
