/**
 * Buying credits in Chromium: a person opens Billing, asks for credits, and the browser goes to the Checkout
 * Session's page (stripe-mock's canned checkout.stripe.com address). That page is Stripe's own; here it is
 * replaced by what Stripe does once the card is paid: a signed checkout.session.completed (and the charge's
 * receipt) to the gateway's webhook, then the redirect to the success address. The person then sees the
 * payment and its ledger row. Without a payment processor, the form is absent and the page says who adds
 * credits. Both pages pass axe-core.
 */
import { expect } from 'chai';
import type { Route } from 'playwright-core';
import { getBalance } from '../../domain/ledger';
import { signUp } from '../support/people';
import { deliver, paymentsEnv, randomId, startStripeMock, stripeEvent, stripeObjects, type StripeMock } from '../support/stripe-mock';
import { axeViolations } from './axe';
import { browserSuite } from './browser';
import { BillingPage } from './pages/settings-pages';

describe('web app: buying credits through Stripe Checkout (stripe-mock) in Chromium', function () {
  this.timeout(240_000);
  const env: NodeJS.ProcessEnv = {};
  let mock: StripeMock;
  before(async function () {
    this.timeout(180_000);
    mock = await startStripeMock();
    Object.assign(env, paymentsEnv(mock));
  });
  const suite = browserSuite({ env });
  after(() => mock?.stop());

  it('sends the person to the checkout, credits the payment Stripe confirms, and shows it with its ledger row', async () => {
    const { gateway, smtp } = suite;
    const owner = await signUp(gateway.url, smtp, 'buyer');
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id as string;
    const page = await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: owner.cookie });

    // Stripe's hosted page: Stripe takes the card, tells the gateway (signed webhooks), and sends the person back.
    const checkouts: string[] = [];
    await page.context().route('https://checkout.stripe.com/**', async (route: Route) => {
      checkouts.push(route.request().url());
      const row = await gateway.runtime.db('payments').where({ workspace_id: workspaceId }).orderBy('created_at', 'desc').first();
      const paid = { id: row.id, workspaceId, sessionId: row.checkout_session_id, amount: Number(row.amount_minor), paymentIntentId: randomId('pi') };
      for (const event of [stripeEvent('checkout.session.completed', stripeObjects.checkoutSession(paid)), stripeEvent('charge.succeeded', stripeObjects.charge(paid))]) {
        const res = await deliver(gateway.url, event);
        if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
      }
      await route.fulfill({ status: 303, headers: { location: `${gateway.url}/settings/billing?payment=${row.id}&checkout=success` } });
    });

    const billing = new BillingPage(page, gateway.url);
    await billing.open();
    expect(await billing.addedByNote()).to.equal(null);
    expect(await axeViolations(page), 'axe, Billing with the purchase form').to.deep.equal([]);
    const before = (await getBalance(gateway.runtime.db, workspaceId)).totalMicro;

    await billing.buy(1234);
    await page.waitForURL(/\/settings\/billing\?payment=pay_[A-Za-z0-9]+&checkout=success$/);
    expect(checkouts).to.have.length(1);
    expect(checkouts[0]).to.match(/^https:\/\/checkout\.stripe\.com\//);
    await page.getByRole('status').filter({ hasText: 'the credits are added as soon as the payment is confirmed' }).waitFor();

    await page.getByRole('table', { name: 'Payments' }).getByText('paid', { exact: true }).waitFor();
    const [payment] = await billing.payments();
    expect(payment.slice(1)).to.deep.equal(['$12.34', '1,234', 'paid', payment[4]]);
    expect(payment[4]).to.match(/^https:\/\/pay\.stripe\.com\/receipts\/payment\/pi_/);
    const [latest] = await billing.ledgerRows();
    expect(latest).to.deep.equal(['topup', '1,234', 'topup']);
    expect((await getBalance(gateway.runtime.db, workspaceId)).totalMicro - before).to.equal(1234_000_000);
    expect(await axeViolations(page), 'axe, Billing with a payment').to.deep.equal([]);
    await suite.shot(page, 'billing-payments');
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});

describe('web app: Billing without a payment processor in Chromium', function () {
  this.timeout(240_000);
  const suite = browserSuite();

  it('has no top-up form and says who adds credits', async () => {
    const { gateway, smtp } = suite;
    const owner = await signUp(gateway.url, smtp, 'no-processor');
    const workspaceId = (await owner.json('GET', '/api/me')).body.workspace.id as string;
    const page = await suite.newPage({ viewport: { width: 1280, height: 900 }, cookie: owner.cookie });
    const billing = new BillingPage(page, gateway.url);
    await billing.open();
    await page.getByTestId('credits-added-by').waitFor();
    expect(await billing.buySection().count()).to.equal(0);
    expect(await page.getByRole('button', { name: /credits/i }).count()).to.equal(0);
    const note = await billing.addedByNote();
    expect(note).to.contain('operators add credits');
    expect(note).to.contain(workspaceId);
    expect(await axeViolations(page), 'axe, Billing without a processor').to.deep.equal([]);
    expect(suite.consoleErrors(), 'console errors').to.deep.equal([]);
  });
});
