import { expect } from 'chai';
import type { Knex } from 'knex';
import { cycleOf } from '../../domain/billing-cycle';
import { createBudgetAlert } from '../../domain/budget-alerts';
import { cycleSpendMicro, dueAlertDeliveries } from '../../domain/budget-evaluation';
import { refund, reserve, settle } from '../../domain/ledger';
import { creditsToMicro } from '../../core/money';
import { createWorkspace } from '../../domain/workspaces';
import { openTestDb } from '../support/db';

describe('budget evaluation (domain/budget-evaluation)', function () {
  this.timeout(60_000);
  let db: Knex;
  let cycle: string;
  before(async () => {
    db = await openTestDb();
    // The cycle the ledger rows written now fall in, by the database's clock.
    cycle = cycleOf(new Date((await db.raw('select now() as now')).rows[0].now));
  });
  after(() => db?.destroy());

  async function spend(workspaceId: string, credits: number, tag: string) {
    const reservationId = `eval-${workspaceId}-${tag}`;
    await reserve(db, { reservationId, workspaceId, amountMicro: creditsToMicro(credits) });
    await settle(db, { reservationId, chargeMicro: creditsToMicro(credits) });
  }

  it('counts settled charges of the cycle as spend; released holds are not spend', async () => {
    const ws = (await createWorkspace(db, { name: 'spend', credits: 100, actor: 'test' })).id;
    await spend(ws, 12.5, 'a');
    await spend(ws, 0.25, 'b');
    await reserve(db, { reservationId: `eval-${ws}-failed`, workspaceId: ws, amountMicro: creditsToMicro(30) });
    await refund(db, { reservationId: `eval-${ws}-failed`, reason: 'model call failed' });
    expect(await cycleSpendMicro(db, ws, cycle)).to.equal(creditsToMicro(12.75));
    expect(await cycleSpendMicro(db, ws, '2001-01')).to.equal(0);
  });

  it('finds percent thresholds against the plan credits, each channel once, with the alert payload', async () => {
    const ws = (await createWorkspace(db, { name: 'Acme Research', credits: 1_000, planId: 'free', actor: 'test' })).id;
    const half = await createBudgetAlert(db, { workspaceId: ws, thresholdType: 'percent', threshold: 50, channels: { email: { to: ['ops@acme.test'] }, webhook: { url: 'http://127.0.0.1:9/hook' } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });
    await createBudgetAlert(db, { workspaceId: ws, thresholdType: 'percent', threshold: 60, channels: { email: { to: ['ops@acme.test'] } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });
    await createBudgetAlert(db, { workspaceId: ws, thresholdType: 'credits', threshold: 249.999999, channels: { webhook: { url: 'http://127.0.0.1:9/hook2' } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });

    await spend(ws, 249.5, 'a');
    const below = await dueAlertDeliveries(db, { workspaceId: ws, cycle });
    expect(below.due).to.deep.equal([]);

    // 250 of the Free plan's 500 credits: exactly 50%.
    await spend(ws, 0.5, 'b');
    const { spendMicro, due } = await dueAlertDeliveries(db, { workspaceId: ws, cycle });
    expect(spendMicro).to.equal(creditsToMicro(250));
    expect(due.map((d) => [d.alertId === half.id ? 'half' : 'credits', d.channel])).to.deep.equal([['half', 'email'], ['half', 'webhook'], ['credits', 'webhook']]);
    const payload = due[0].payload;
    expect(payload).to.deep.include({ alert_id: half.id, workspace: { id: ws, name: 'Acme Research' }, cycle, spend: 250, balance: 750 });
    expect(payload.threshold).to.deep.equal({ type: 'percent', value: 50, credits: 250 });
    expect(payload.summary).to.contain('Acme Research').and.contain('250 credits').and.contain(`in ${cycle}`).and.contain("50% of the Free plan's 500 monthly credits");

    // Another cycle has no spend, so nothing is due there.
    expect((await dueAlertDeliveries(db, { workspaceId: ws, cycle: '2001-01' })).due).to.deep.equal([]);
  });

  it('leaves out (alert, channel) pairs already delivered this cycle', async () => {
    const ws = (await createWorkspace(db, { name: 'delivered', credits: 10, actor: 'test' })).id;
    const alert = await createBudgetAlert(db, { workspaceId: ws, thresholdType: 'credits', threshold: 1, channels: { email: { to: ['a@b.test'] }, webhook: { url: 'http://127.0.0.1:9/x' } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });
    await spend(ws, 2, 'a');
    await db('budget_alert_deliveries').insert({ alert_id: alert.id, cycle, channel: 'email', payload: '{}' });
    const { due } = await dueAlertDeliveries(db, { workspaceId: ws, cycle });
    expect(due.map((d) => d.channel)).to.deep.equal(['webhook']);
  });

  it('skips percent alerts of a workspace without a plan', async () => {
    const ws = (await createWorkspace(db, { name: 'planless', credits: 10, actor: 'test' })).id;
    await createBudgetAlert(db, { workspaceId: ws, thresholdType: 'percent', threshold: 1, channels: { email: { to: ['a@b.test'] } }, actor: 'test', webhooks: { allowPrivateAddresses: true } });
    await spend(ws, 5, 'a');
    expect((await dueAlertDeliveries(db, { workspaceId: ws, cycle })).due).to.deep.equal([]);
  });
});
