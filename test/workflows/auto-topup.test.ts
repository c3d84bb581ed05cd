import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../config/env';
import { createUser } from '../../domain/accounts';
import { chargeAutoTopUp } from '../../domain/auto-topup';
import { getBalance, ledgerSum, reserve, settle } from '../../domain/ledger';
import { addMember } from '../../domain/members';
import { stripeClient } from '../../infra/stripe';
import { freePort } from '../../stack/processes';
import { autoTopUpWorkflowId } from '../../workflows/contracts';
import type { AutoTopUpStatus } from '../../workflows/auto-topup';
import { startTestGateway, type Tenant, type TestGateway } from '../support/gateway';
import { SmtpSink, waitFor } from '../support/notification-sinks';
import { PASSWORD, uniqueEmail } from '../support/people';
import { deliver, paymentsEnv, randomId, startStripeMock, stripeEvent, stripeObjects, type RecordedPayment, type StripeMock } from '../support/stripe-mock';

describe('automatic top-ups (workflows/auto-topup) against stripe-mock', function () {
  this.timeout(180_000);
  const PERIOD = 3600;
  let mock: StripeMock;
  let smtp: SmtpSink;
  let gateway: TestGateway;
  let env: NodeJS.ProcessEnv;
  before(async function () {
    this.timeout(180_000);
    mock = await startStripeMock();
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    env = { ...paymentsEnv(mock, { AUTO_TOPUP_PERIOD_SECONDS: String(PERIOD) }), SMTP_URL: smtp.url, SMTP_FROM: 'Gateway Billing <billing@gateway.test>' };
    gateway = await startTestGateway({ taskQueue: `topup-${randomBytes(4).toString('hex')}`, env });
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
    await mock?.stop();
  });

  const db = () => gateway.runtime.db;
  const autoPayments = (t: Tenant) => db()('payments').where({ workspace_id: t.workspaceId, kind: 'auto' }).orderBy('created_at');
  const status = (t: Tenant) => gateway.runtime.temporal.client.workflow.getHandle(autoTopUpWorkflowId(t.workspaceId)).query<AutoTopUpStatus>('autoTopUpStatus');
  const chat = (t: Tenant) => t.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Say a few words' }] });
  /** What the gateway recorded of an automatic payment, for the webhook Stripe would send about it. */
  const recorded = (t: Tenant, row: { id: string; amount_minor: number; payment_intent_id: string }): RecordedPayment => ({
    id: row.id, workspaceId: t.workspaceId, amount: Number(row.amount_minor), paymentIntentId: row.payment_intent_id,
  });

  /** A workspace with an owner (who gets the e-mails), 110 credits, and a card saved by a purchase of 100. */
  async function workspaceWithCard(): Promise<{ tenant: Tenant; email: string }> {
    const tenant = await gateway.newTenant({ credits: 10 });
    const email = uniqueEmail('payer');
    const user = await createUser(db(), { email, password: PASSWORD, verified: true, actor: 'test' });
    await addMember(db(), { workspaceId: tenant.workspaceId, userId: user.id, role: 'owner', actor: 'test' });
    const bought = (await (await tenant.fetch('/v1/billing/topups', {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': randomId('k') }, body: JSON.stringify({ credits: 100 }),
    })).json()) as { id: string; amount: number };
    const purchase = { id: bought.id, workspaceId: tenant.workspaceId, amount: bought.amount, paymentIntentId: randomId('pi') };
    expect((await deliver(gateway.url, stripeEvent('payment_intent.succeeded', stripeObjects.paymentIntent(purchase)))).status).to.equal(200);
    expect((await getBalance(db(), tenant.workspaceId)).totalMicro).to.equal(110_000_000);
    const on = await tenant.fetch('/v1/billing/auto-topup', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ enabled: true, threshold: 110, credits: 500 }) });
    expect(on.status).to.equal(200);
    return { tenant, email };
  }

  it('charges the saved card once when a settlement crosses the threshold, and once only in the period however often it crosses', async () => {
    const { tenant } = await workspaceWithCard();
    await chat(tenant);
    const [charge] = await waitFor('the automatic charge', async () => {
      const rows = await autoPayments(tenant);
      return rows.length > 0 && rows[0].payment_intent_id ? rows : null;
    });
    expect(charge).to.include({ credits_micro: 500_000_000, amount_minor: 500, currency: 'usd', created_by: 'system:auto-topup' });
    expect(charge.payment_intent_id).to.match(/^pi_/);

    // More settlements below the threshold while the charge is on its way: checked, never charged again.
    const before = await status(tenant);
    await chat(tenant);
    await chat(tenant);
    await waitFor('the later checks', async () => { const s = await status(tenant); return s.checks > before.checks && !s.busy; });
    expect(await autoPayments(tenant)).to.have.length(1);
    expect((await status(tenant)).charged).to.equal(1);

    // Stripe confirms it: the credits arrive once.
    const confirmed = stripeEvent('payment_intent.succeeded', { ...stripeObjects.paymentIntent(recorded(tenant, charge)), setup_future_usage: null });
    await deliver(gateway.url, confirmed);
    await deliver(gateway.url, confirmed);
    const topups = await db()('credit_ledger').where({ workspace_id: tenant.workspaceId, kind: 'topup', idempotency_key: `stripe:${charge.payment_intent_id}` });
    expect(topups.map((r) => Number(r.amount_micro))).to.deep.equal([500_000_000]);

    // A second crossing in the same period: spent below the threshold again, a settlement signals, nothing is charged.
    const reservationId = randomId('spend');
    await reserve(db(), { reservationId, workspaceId: tenant.workspaceId, amountMicro: 550_000_000 });
    await settle(db(), { reservationId, chargeMicro: 550_000_000 });
    const second = await status(tenant);
    await chat(tenant);
    await waitFor('the check of the second crossing', async () => { const s = await status(tenant); return s.checks > second.checks && !s.busy; });
    expect(await autoPayments(tenant)).to.have.length(1);
    expect((await getBalance(db(), tenant.workspaceId)).totalMicro).to.be.below(110_000_000);
    const audit = await db()('audit_log').where({ workspace_id: tenant.workspaceId, action: 'payment.auto_topup' }).count({ n: '*' });
    expect(audit).to.deep.equal([{ n: 1 }]);
    const sums = await ledgerSum(db(), tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);

    // The next period may charge again (one payment per workspace and period).
    const payments = loadConfig(env).payments!;
    const now = new Date(Date.now() + PERIOD * 1000);
    const next = await chargeAutoTopUp(db(), stripeClient(payments), payments, { workspaceId: tenant.workspaceId, now });
    expect(next.outcome).to.equal('charged');
    expect(await chargeAutoTopUp(db(), stripeClient(payments), payments, { workspaceId: tenant.workspaceId, now })).to.deep.include({ outcome: 'already_this_period' });
    expect(await autoPayments(tenant)).to.have.length(2);
  });

  it('shows a failed charge in Billing and e-mails the owner once', async () => {
    const { tenant, email } = await workspaceWithCard();
    await chat(tenant);
    const [charge] = await waitFor('the automatic charge', async () => {
      const rows = await autoPayments(tenant);
      return rows.length > 0 && rows[0].payment_intent_id ? rows : null;
    });
    const declined = stripeEvent('payment_intent.payment_failed', stripeObjects.paymentIntent(recorded(tenant, charge), 'requires_payment_method', 'Your card was declined.'));
    expect((await deliver(gateway.url, declined)).status).to.equal(200);
    await deliver(gateway.url, declined);

    const mail = await waitFor('the failure e-mail', () => smtp.messages.find((m) => m.to.includes(email)));
    expect(mail.subject).to.match(/^Automatic top-up failed/);
    expect(mail.text).to.contain('Your card was declined.');
    expect(mail.text).to.contain('500 credits');

    const view = (await (await tenant.fetch('/v1/billing/auto-topup')).json()) as { last_failure: { payment_id: string; message: string } };
    expect(view.last_failure).to.include({ payment_id: charge.id, message: 'Your card was declined.' });
    const list = (await (await tenant.fetch('/v1/billing/payments')).json()) as { data: Array<{ id: string; status: string; failure_message: string; kind: string }> };
    expect(list.data.find((p) => p.id === charge.id)).to.deep.include({ kind: 'auto', status: 'failed', failure_message: 'Your card was declined.' });
    expect((await getBalance(db(), tenant.workspaceId)).totalMicro).to.be.below(110_000_000);

    // Later settlements in the period neither charge again nor e-mail again.
    await chat(tenant);
    const s = await status(tenant);
    await waitFor('the workflow to settle down', async () => { const now = await status(tenant); return now.checks >= s.checks && !now.busy; });
    expect(await autoPayments(tenant)).to.have.length(1);
    expect(smtp.messages.filter((m) => m.to.includes(email))).to.have.length(1);
    expect(await db()('payments').where({ id: charge.id }).first('failure_notified_at')).to.have.property('failure_notified_at').that.is.not.equal(null);
  });
});
