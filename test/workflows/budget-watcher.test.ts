import { expect } from 'chai';
import { WorkflowNotFoundError } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { cycleOf } from '../../domain/billing-cycle';
import { cycleSpendMicro } from '../../domain/budget-evaluation';
import { microToCredits } from '../../core/money';
import { freePort } from '../../stack/processes';
import { alertDeliveryWorkflowId, budgetWatcherId } from '../../workflows/contracts';
import type { WatcherStatus } from '../../workflows/budget-watcher';
import { startTestGateway, type Tenant, type TestGateway } from '../support/gateway';
import { SmtpSink, waitFor, WebhookSink } from '../support/notification-sinks';

describe('budget alerts end to end (workflows/budget-watcher)', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  const webhook = new WebhookSink();
  const cycle = () => cycleOf(new Date());
  const taskQueue = `budget-${randomBytes(4).toString('hex')}`;

  before(async function () {
    this.timeout(180_000);
    smtp = new SmtpSink(await freePort());
    await smtp.start();
    await webhook.start();
    gateway = await startTestGateway({ taskQueue, env: { SMTP_URL: smtp.url, SMTP_FROM: 'Gateway Alerts <alerts@gateway.test>', ALLOW_PRIVATE_WEBHOOKS: 'true' } });
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
    await webhook.stop();
  });

  const client = () => gateway.runtime.temporal.client;

  async function createAlert(tenant: Tenant, body: unknown): Promise<{ id: string }> {
    const res = await tenant.fetch('/v1/budget/alerts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).to.equal(201);
    return (await res.json()) as { id: string };
  }
  async function chat(tenant: Tenant, opts: { stream?: boolean } = {}) {
    if (opts.stream) {
      const stream = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Say a few words' }], stream: true });
      for await (const _chunk of stream) { /* drain */ }
      return;
    }
    await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Say a few words' }] });
  }
  const watcherStatus = (workspaceId: string) => client().workflow.getHandle(budgetWatcherId(workspaceId)).query<WatcherStatus>('budgetWatcherStatus');
  const delivery = (alertId: string, channel: 'email' | 'webhook') => client().workflow.getHandle(alertDeliveryWorkflowId({ alertId, cycle: cycle(), channel }));
  /** The delivery workflow's outcome, once the watcher has started it. */
  async function delivered(alertId: string, channel: 'email' | 'webhook') {
    await waitFor(`the ${channel} delivery to start`, () => delivery(alertId, channel).describe().then(() => true, () => false));
    return delivery(alertId, channel).result();
  }
  const mailFor = (address: string) => smtp.messages.filter((m) => m.to.includes(address));

  it('sends one e-mail and one chat message per threshold per cycle as real requests cross it', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const crossed = await createAlert(tenant, { threshold_type: 'credits', threshold: 0.000001, channels: { email: { to: ['ops@crossed.test'] }, webhook: { url: `${webhook.url}/hooks/crossed` } } });
    const farOff = await createAlert(tenant, { threshold_type: 'credits', threshold: 90, channels: { email: { to: ['ops@far-off.test'] } } });

    for (let i = 0; i < 3; i++) await chat(tenant);
    expect(await delivered(crossed.id, 'email')).to.equal('sent');
    expect(await delivered(crossed.id, 'webhook')).to.equal('sent');

    // More spend in the same cycle: the watcher evaluates again and sends nothing new.
    const before = await watcherStatus(tenant.workspaceId);
    for (let i = 0; i < 3; i++) await chat(tenant);
    await waitFor('the watcher to evaluate the later requests', async () => {
      const now = await watcherStatus(tenant.workspaceId);
      return now.evaluations > before.evaluations && !now.busy && now.pendingCycles.length === 0;
    });

    expect(mailFor('ops@crossed.test')).to.have.length(1);
    expect(mailFor('ops@far-off.test')).to.have.length(0);
    expect(webhook.delivered('/hooks/crossed')).to.have.length(1);
    const deliveries = await gateway.runtime.db('budget_alert_deliveries').whereIn('alert_id', [crossed.id, farOff.id]).orderBy('channel');
    expect(deliveries.map((d) => [d.alert_id, d.cycle, d.channel])).to.deep.equal([[crossed.id, cycle(), 'email'], [crossed.id, cycle(), 'webhook']]);

    // What the people on the channels see.
    const [mail] = mailFor('ops@crossed.test');
    const spentByThen = deliveries[0].payload.spend;
    expect(spentByThen).to.be.greaterThan(0);
    expect(spentByThen).to.be.at.most(microToCredits(await cycleSpendMicro(gateway.runtime.db, tenant.workspaceId, cycle())));
    expect(mail.from).to.equal('alerts@gateway.test');
    expect(mail.subject).to.equal(`Budget alert: test spent ${spentByThen} credits in ${cycle()}`);
    expect(mail.text).to.contain(`Workspace: test (${tenant.workspaceId})`).and.contain(`Billing cycle: ${cycle()}`).and.contain('Threshold: 0.000001 credits');
    const [message] = webhook.delivered('/hooks/crossed');
    expect(message.body.text).to.equal(deliveries[1].payload.summary);
    expect(message.body.text).to.contain(`Workspace "test" (${tenant.workspaceId}) has spent ${spentByThen} credits in ${cycle()}`);
  });

  it('delivers, exactly once, to a channel that was down when the threshold was crossed', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const alert = await createAlert(tenant, { threshold_type: 'credits', threshold: 0.000001, channels: { email: { to: ['ops@down.test'] }, webhook: { url: `${webhook.url}/hooks/down` } } });
    await smtp.stop();
    webhook.down.add('/hooks/down');

    // A streamed request is the only spend here (so the stream workflow signals the watcher too).
    await chat(tenant, { stream: true });
    await waitFor('failed webhook attempts', () => webhook.calls.filter((c) => c.path === '/hooks/down' && c.status === 503).length >= 2);
    await waitFor('failed e-mail attempts', async () => {
      const described = await delivery(alert.id, 'email').describe().catch(() => null);
      return (described?.raw.pendingActivities?.[0]?.attempt ?? 0) >= 2;
    });
    expect(mailFor('ops@down.test')).to.have.length(0);
    // Recorded before sending, and not sent yet.
    expect((await gateway.runtime.db('budget_alert_deliveries').where({ alert_id: alert.id })).map((d) => d.status)).to.deep.equal(['sending', 'sending']);

    await smtp.start();
    webhook.down.delete('/hooks/down');
    expect(await delivered(alert.id, 'email')).to.equal('sent');
    expect(await delivered(alert.id, 'webhook')).to.equal('sent');
    expect(mailFor('ops@down.test')).to.have.length(1);
    expect(webhook.delivered('/hooks/down')).to.have.length(1);
    expect((await gateway.runtime.db('budget_alert_deliveries').where({ alert_id: alert.id })).map((d) => d.status)).to.deep.equal(['sent', 'sent']);
    // Every attempt carried the same delivery id.
    expect(new Set(webhook.calls.filter((c) => c.path === '/hooks/down').map((c) => c.headers['x-gateway-delivery-id'])).size).to.equal(1);
  });

  it('continues as new when its history grows, and still sends each alert once', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    await createAlert(tenant, { threshold_type: 'credits', threshold: 0.000001, channels: { webhook: { url: `${webhook.url}/hooks/long` } } });
    // The watcher, started before any request with a short history limit.
    const watcher = await client().workflow.signalWithStart('budgetWatcherWorkflow', {
      workflowId: budgetWatcherId(tenant.workspaceId), taskQueue, args: [{ workspaceId: tenant.workspaceId, maxHistoryEvents: 40 }],
      signal: 'budgetSpendChanged', signalArgs: [{ cycle: cycle() }],
    });
    const firstRunId = watcher.signaledRunId;
    await chat(tenant);
    await waitFor('the alert', () => webhook.delivered('/hooks/long').length > 0);

    for (let i = 0; i < 12; i++) {
      await chat(tenant);
      await waitFor('the evaluation', async () => {
        const now = await watcherStatus(tenant.workspaceId);
        return !now.busy && now.pendingCycles.length === 0;
      });
    }
    const latest = await client().workflow.getHandle(budgetWatcherId(tenant.workspaceId)).describe();
    expect(latest.runId).not.to.equal(firstRunId);
    const status = await watcherStatus(tenant.workspaceId);
    expect(status.evaluations).to.be.at.least(13);
    expect(status.deliveriesStarted).to.equal(1);
    expect(webhook.delivered('/hooks/long')).to.have.length(1);
  });

  it('does not start a watcher for a workspace without alerts', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    await chat(tenant);
    await chat(tenant, { stream: true });
    // The stream's bytes reach the client before its workflow settles: wait for both request workflows to end.
    await waitFor('both request workflows to complete', async () => {
      const statuses: string[] = [];
      for await (const run of client().workflow.list({ query: `GatewayWorkspaceId = '${tenant.workspaceId}'` })) statuses.push(run.status.name);
      return statuses.length === 2 && statuses.every((st) => st === 'COMPLETED');
    });
    await client().workflow.getHandle(budgetWatcherId(tenant.workspaceId)).describe().then(
      () => expect.fail('no watcher should exist'),
      (err) => expect(err).to.be.instanceOf(WorkflowNotFoundError),
    );
  });
});
