import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { loadConfig } from '../../config/env';
import { AesGcmPayloadCodec, gatewayDataConverter, KEY_ID_METADATA, resolveCodecKeys } from '../../infra/payload-codec';
import { ensureMonthlyGrantSchedule, MONTHLY_GRANT_SCHEDULE_ID, runGrantCycle } from '../../worker/grant-schedule';
import { ledgerSum } from '../../domain/ledger';
import { creditsToMicro } from '../../core/money';
import { createWorkspace } from '../../domain/workspaces';
import { grantKeys } from '../../domain/plan-grants';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { SCHEDULED_TASK_QUEUE } from '../../workflows/contracts';

// Cycles long past: their buckets expired before they were granted, so these runs (which grant to every
// workspace on a plan in the shared test database) leave every spendable balance as it was.
const SCHEDULED_CYCLE = '2001-03';
const CYCLE_A = '2001-05';
const CYCLE_B = '2001-06';

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('monthly credit grants (workflows/monthly-credit-grants)', function () {
  this.timeout(120_000);
  const taskQueue = `grants-${randomBytes(4).toString('hex')}`;
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ taskQueue, api: false });
  });
  after(() => gateway?.stop());

  const db = () => gateway.runtime.db;
  const client = () => gateway.runtime.temporal.client;
  const workspace = async (planId: string | null, credits: number) => (await createWorkspace(db(), { name: `grants ${planId}`, credits, planId, actor: 'test' })).id;
  const bucket = (workspaceId: string, cycle: string) => db()('credit_buckets').where({ workspace_id: workspaceId, kind: 'plan', cycle }).first();
  const topupBucket = (workspaceId: string) => db()('credit_buckets').where({ workspace_id: workspaceId, kind: 'topup' }).first();

  it('creates the schedule at worker start: 00:00 UTC on the 1st, running the grant on the scheduled-work task queue', async () => {
    const schedule = await client().schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).describe();
    expect(schedule.action.workflowType).to.equal('monthlyCreditGrantsWorkflow');
    expect(schedule.action.taskQueue).to.equal(SCHEDULED_TASK_QUEUE);
    expect(schedule.spec.timezone ?? 'UTC').to.equal('UTC');
    const [calendar] = schedule.spec.calendars ?? [];
    expect(calendar.dayOfMonth).to.deep.equal([{ start: 1, end: 1, step: 1 }]);
    expect(calendar.hour).to.deep.equal([{ start: 0, end: 0, step: 1 }]);
    expect(calendar.minute).to.deep.equal([{ start: 0, end: 0, step: 1 }]);
    for (const next of schedule.info.nextActionTimes) {
      expect(next.toISOString()).to.match(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    }
  });

  it('leaves an up-to-date schedule alone and brings a stale one in line', async () => {
    const handle = client().schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID);
    expect(await ensureMonthlyGrantSchedule(client())).to.equal('unchanged');
    await handle.update((previous) => ({ ...previous, action: { ...previous.action, taskQueue: `${taskQueue}-elsewhere` } }));
    expect(await ensureMonthlyGrantSchedule(client())).to.equal('updated');
    expect((await handle.describe()).action.taskQueue).to.equal(SCHEDULED_TASK_QUEUE);
  });

  it('keeps the schedule on its own task queue when a worker of another task queue starts', async () => {
    const other = await startTestGateway({ taskQueue: `${taskQueue}-other`, api: false });
    try {
      expect((await client().schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).describe()).action.taskQueue).to.equal(SCHEDULED_TASK_QUEUE);
    } finally {
      await other.stop();
    }
  });

  it('re-seals the schedule\'s input under a new first key, so a rotation can drop the old one', async () => {
    const runKeys = resolveCodecKeys(loadConfig());
    const newKey = { id: `rotated-${randomBytes(3).toString('hex')}`, key: randomBytes(32) };
    const clientWith = (keys: typeof runKeys) => new Client({
      connection: gateway.runtime.temporal.connection, namespace: gateway.runtime.temporal.namespace,
      dataConverter: gatewayDataConverter(new AesGcmPayloadCodec(keys)),
    });
    const storedKeyId = async (c: Client) => {
      const { raw } = await c.schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).describe();
      return Buffer.from(raw.schedule!.action!.startWorkflow!.input!.payloads![0].metadata![KEY_ID_METADATA]).toString();
    };
    const rotated = clientWith([newKey, ...runKeys]);
    expect(await ensureMonthlyGrantSchedule(rotated)).to.equal('updated');
    expect(await ensureMonthlyGrantSchedule(rotated)).to.equal('unchanged');
    expect(await storedKeyId(rotated)).to.equal(newKey.id);
    // Back under the run's own key for the tests that follow (they no longer know the new one).
    const restored = clientWith([...runKeys, newKey]);
    expect(await ensureMonthlyGrantSchedule(restored)).to.equal('updated');
    expect(await storedKeyId(client())).to.equal(runKeys[0].id);
  });

  it('takes the cycle of a scheduled run from its scheduled time', async () => {
    const ws = await workspace('starter', 0);
    // Backfilling the schedule over 1 March 2001 runs the action with that scheduled time, now.
    await client().schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).backfill({
      start: new Date('2001-02-28T23:00:00Z'), end: new Date('2001-03-01T01:00:00Z'), overlap: 'ALLOW_ALL',
    });
    const schedule = client().schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID);
    const action = await waitFor('the backfilled run', async () => (await schedule.describe()).info.recentActions
      .find((a) => a.scheduledAt.toISOString() === '2001-03-01T00:00:00.000Z'));
    const result = await client().workflow.getHandle(action.action.workflow.workflowId).result();
    expect(result.cycle).to.equal(SCHEDULED_CYCLE);
    const granted = await bucket(ws, SCHEDULED_CYCLE);
    expect(granted.balance_micro).to.equal(creditsToMicro(2_000));
    expect(new Date(granted.expires_at).toISOString()).to.equal('2001-04-01T00:00:00.000Z');
  });

  it('grants once per cycle on demand, in batches with continue-as-new; a second run grants nothing', async () => {
    const pro = await workspace('pro', 50);
    const free = await workspace('free', 20);
    const planless = await workspace(null, 10);

    const first = await runGrantCycle(client(), { cycle: CYCLE_A, batchSize: 2, batchesPerRun: 1 });
    expect(first.cycle).to.equal(CYCLE_A);
    expect(first.workspaces).to.be.at.least(3);
    expect(first.granted).to.equal(first.workspaces);
    // Two workspaces per batch, one batch per run: the chain continued as new.
    expect(first.runs).to.equal(first.batches);
    expect(first.runs).to.be.at.least(2);

    const second = await runGrantCycle(client(), { cycle: CYCLE_A, batchSize: 2, batchesPerRun: 1 });
    expect(second).to.include({ cycle: CYCLE_A, workspaces: first.workspaces, granted: 0, grantedMicro: 0, rolledOverMicro: 0, expiredMicro: 0 });

    for (const [ws, credits] of [[pro, 10_000], [free, 500]] as const) {
      const grants = await db()('credit_ledger').where({ workspace_id: ws, kind: 'grant' });
      expect(grants.map((g) => g.idempotency_key)).to.deep.equal([grantKeys.grant(ws, CYCLE_A)]);
      expect((await bucket(ws, CYCLE_A)).balance_micro).to.equal(creditsToMicro(credits));
    }
    expect(await db()('credit_buckets').where({ workspace_id: planless, kind: 'plan' })).to.have.length(0);
  });

  it('rolls the previous cycle over or expires it by plan, and never touches topups', async () => {
    const pro = await workspace('pro', 50);
    const free = await workspace('free', 20);
    await runGrantCycle(client(), { cycle: CYCLE_A });
    const result = await runGrantCycle(client(), { cycle: CYCLE_B });
    expect(result.granted).to.equal(result.workspaces);

    // Pro: 10,000 unused, 5,000 (the cap) carried over, 5,000 expired.
    expect((await bucket(pro, CYCLE_A)).balance_micro).to.equal(0);
    expect((await bucket(pro, CYCLE_B)).balance_micro).to.equal(creditsToMicro(15_000));
    const proMoves = await db()('credit_ledger').where({ workspace_id: pro }).whereIn('kind', ['rollover', 'expire']).orderBy('id');
    expect(proMoves.map((r) => [r.kind, r.amount_micro])).to.deep.equal([
      ['rollover', -creditsToMicro(5_000)], ['rollover', creditsToMicro(5_000)], ['expire', -creditsToMicro(5_000)],
    ]);
    // Free: no rollover, all 500 expire.
    expect((await bucket(free, CYCLE_A)).balance_micro).to.equal(0);
    expect((await bucket(free, CYCLE_B)).balance_micro).to.equal(creditsToMicro(500));

    for (const [ws, credits] of [[pro, 50], [free, 20]] as const) {
      expect((await topupBucket(ws)).balance_micro).to.equal(creditsToMicro(credits));
      const sums = await ledgerSum(db(), ws);
      expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
    }
  });
});
