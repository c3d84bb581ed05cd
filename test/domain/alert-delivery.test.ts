import { expect } from 'chai';
import type { Knex } from 'knex';
import { alertDeliveryId, deliverBudgetAlert } from '../../domain/alert-delivery';
import { createBudgetAlert, deleteBudgetAlert } from '../../domain/budget-alerts';
import type { DueDelivery } from '../../domain/budget-evaluation';
import { createWorkspace } from '../../domain/workspaces';
import { freePort } from '../../stack/processes';
import { openTestDb } from '../support/db';
import { SmtpSink, WebhookSink } from '../support/notification-sinks';

/** The webhook sink listens on loopback, which deliveries refuse unless told otherwise. */
const LOCAL_WEBHOOKS = { allowPrivateAddresses: true };

describe('alert delivery (domain/alert-delivery)', function () {
  this.timeout(60_000);
  let db: Knex;
  let smtp: SmtpSink;
  const webhook = new WebhookSink();
  const email = () => ({ smtpUrl: smtp.url, from: 'Gateway Alerts <alerts@gateway.test>' });
  before(async () => {
    db = await openTestDb();
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    await webhook.start();
  });
  after(async () => {
    await smtp?.stop();
    await webhook.stop();
    await db?.destroy();
  });

  async function dueFor(path: string, to: string) {
    const ws = await createWorkspace(db, { name: `Delivery ${path}`, actor: 'test' });
    const alert = await createBudgetAlert(db, { workspaceId: ws.id, thresholdType: 'credits', threshold: 5, channels: { email: { to: [to] }, webhook: { url: `${webhook.url}${path}` } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });
    const payload = {
      alert_id: alert.id, workspace: { id: ws.id, name: ws.name }, cycle: '2026-11', threshold: { type: 'credits' as const, value: 5, credits: 5 }, spend: 5.5, balance: 94.5,
      summary: `Workspace "${ws.name}" (${ws.id}) has spent 5.5 credits in 2026-11, reaching its budget alert of 5 credits. Balance: 94.5 credits.`,
    };
    const d = (channel: 'email' | 'webhook'): DueDelivery => ({ alertId: alert.id, cycle: '2026-11', channel, payload });
    return { ws, alert, d };
  }

  it('refuses to post to a webhook on a private address unless allowed: nothing is sent, the delivery stays to be retried', async () => {
    const { d, alert } = await dueFor('/private', 'ops@example.com');
    await deliverBudgetAlert(db, d('webhook'), email()).then(() => expect.fail('should refuse'), (err) => expect(err.message).to.match(/not a public address/));
    const rows = await db('budget_alert_deliveries').where({ alert_id: alert.id });
    expect(rows.map((r) => r.status)).to.deep.equal(['sending']);
    expect(webhook.calls.filter((c) => c.path === '/private')).to.have.length(0);
  });

  it('sends an e-mail over SMTP and a Slack-style message to the webhook, each recorded once', async () => {
    const { ws, alert, d } = await dueFor('/hooks/one', 'ops@one.test');
    expect(await deliverBudgetAlert(db, d('email'), email(), LOCAL_WEBHOOKS)).to.equal('sent');
    expect(await deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS)).to.equal('sent');

    const mail = smtp.messages.filter((m) => m.to.includes('ops@one.test'));
    expect(mail).to.have.length(1);
    expect(mail[0].from).to.equal('alerts@gateway.test');
    expect(mail[0].subject).to.equal(`Budget alert: ${ws.name} spent 5.5 credits in 2026-11`);
    expect(mail[0].text).to.contain(d('email').payload.summary).and.contain(`Workspace: ${ws.name} (${ws.id})`).and.contain('Balance: 94.5 credits');

    const [call] = webhook.delivered('/hooks/one');
    expect(call.body.text).to.equal(d('webhook').payload.summary);
    const fields = call.body.blocks.find((b: any) => b.fields).fields.map((f: any) => f.text);
    expect(fields).to.include(`*Workspace*\n${ws.name} (${ws.id})`).and.include('*Spent this cycle*\n5.5 credits').and.include('*Billing cycle*\n2026-11');

    const rows = await db('budget_alert_deliveries').where({ alert_id: alert.id }).orderBy('channel');
    expect(rows.map((r) => [r.channel, r.cycle, r.payload.spend, r.status])).to.deep.equal([['email', '2026-11', 5.5, 'sent'], ['webhook', '2026-11', 5.5, 'sent']]);

    // Each carries its delivery's id, the same on every attempt (receivers drop repeats by it).
    expect(call.headers['x-gateway-delivery-id']).to.equal(alertDeliveryId(d('webhook')));
    expect(call.headers['idempotency-key']).to.equal(alertDeliveryId(d('webhook')));
    expect(alertDeliveryId(d('webhook'))).to.match(/^dlv_[0-9a-f]{32}$/).and.not.equal(alertDeliveryId(d('email')));
    expect(mail[0].messageId).to.equal(`<${alertDeliveryId(d('email'))}@model-gateway>`);
    expect(mail[0].deliveryId).to.equal(alertDeliveryId(d('email')));
  });

  it('never sends twice, even when deliveries of one alert run at once', async () => {
    const { d } = await dueFor('/hooks/twice', 'ops@twice.test');
    const outcomes = await Promise.all([1, 2, 3].map(() => deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS)));
    expect(outcomes.sort()).to.deep.equal(['already_sent', 'already_sent', 'sent']);
    expect(await deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS)).to.equal('already_sent');
    expect(webhook.delivered('/hooks/twice')).to.have.length(1);
  });

  it('fails while the channel is down, the delivery recorded as sending, so the retry sends with the same id', async () => {
    const { alert, d } = await dueFor('/hooks/down', 'ops@down.test');
    webhook.down.add('/hooks/down');
    await deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS).then(() => expect.fail('should fail'), (err) => expect(err.message).to.match(/503/));
    const deadSmtp = { smtpUrl: `smtp://127.0.0.1:${await freePort()}`, from: 'alerts@gateway.test' };
    await deliverBudgetAlert(db, d('email'), deadSmtp).then(() => expect.fail('should fail'), (err) => expect(err.message).to.match(/ECONNREFUSED|connect/i));
    expect((await db('budget_alert_deliveries').where({ alert_id: alert.id })).map((r) => r.status)).to.deep.equal(['sending', 'sending']);

    webhook.down.delete('/hooks/down');
    expect(await deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS)).to.equal('sent');
    expect(await deliverBudgetAlert(db, d('email'), email(), LOCAL_WEBHOOKS)).to.equal('sent');
    const calls = webhook.calls.filter((c) => c.path === '/hooks/down');
    expect(calls.map((c) => c.status)).to.deep.equal([503, 200]);
    expect(calls.map((c) => c.headers['x-gateway-delivery-id'])).to.deep.equal([alertDeliveryId(d('webhook')), alertDeliveryId(d('webhook'))]);
  });

  it('stops for an alert deleted meanwhile', async () => {
    const { ws, alert, d } = await dueFor('/hooks/deleted', 'ops@deleted.test');
    await deleteBudgetAlert(db, { workspaceId: ws.id, alertId: alert.id, actor: 'test' });
    expect(await deliverBudgetAlert(db, d('webhook'), email(), LOCAL_WEBHOOKS)).to.equal('alert_removed');
    expect(webhook.calls.filter((c) => c.path === '/hooks/deleted')).to.have.length(0);
  });
});
