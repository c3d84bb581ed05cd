import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { requestSearchAttributes } from '../../api/requests/workflow-ids';
import type { ModelRequestInput } from '../../workflows/request-steps';
import { loadConfig } from '../../config/env';
import { getBalance, ledgerSum } from '../../domain/ledger';
import { HOLD_SWEEPER_SCHEDULE_ID, SCHEDULED_TASK_QUEUE } from '../../workflows/contracts';
import type { holdSweeperWorkflow } from '../../workflows/hold-sweeper';
import { startTestGateway, type Tenant, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/notification-sinks';

const chat = JSON.stringify({ model: 'sim-chat', max_tokens: 16, messages: [{ role: 'user', content: 'take your time' }] });

describe('every hold ends (request compensation, workflows/hold-sweeper)', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  const taskQueue = `hold-sweeper-${randomBytes(4).toString('hex')}`;
  before(async function () {
    this.timeout(180_000);
    // A model that answers slowly without being told how slowly (a batch's line): after 30 s.
    gateway = await startTestGateway({ taskQueue, providerOverrides: { simulated: { headers: { 'x-sim-slow-ms': '30000' } } } });
  });
  after(() => gateway?.stop());

  const db = () => gateway.runtime.db;
  const client = () => gateway.runtime.temporal.client;

  /** A chat whose model answers only after 30 s, so its hold stays open while the test acts on the run. */
  function slowChat(tenant: Tenant): Promise<Response> {
    return tenant.fetch('/v1/chat/completions', {
      method: 'POST', body: chat,
      headers: { 'content-type': 'application/json', 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '30000' },
    });
  }
  const heldOf = (workspaceId: string) => waitFor('a held reservation', () => db()('reservations').where({ workspace_id: workspaceId, status: 'held' }).first());
  const reservation = (id: string) => db()('reservations').where({ id }).first();
  const reservedOnKey = async (keyId: string) => Number((await db()('api_keys').where({ id: keyId }).first('reserved_micro')).reserved_micro);
  const workflowOf = (reservationId: string) => reservationId.slice(0, reservationId.lastIndexOf(':'));

  async function expectBooksClosed(tenant: Tenant, reservationId: string): Promise<void> {
    expect((await reservation(reservationId)).status).to.equal('released');
    expect(await reservedOnKey(tenant.keyId)).to.equal(0);
    expect((await getBalance(db(), tenant.workspaceId)).totalMicro).to.equal(100_000_000);
    const sums = await ledgerSum(db(), tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  }

  const sweep = () => client().workflow.execute<typeof holdSweeperWorkflow>('holdSweeperWorkflow', {
    taskQueue: SCHEDULED_TASK_QUEUE, workflowId: `sweep-test-${randomBytes(4).toString('hex')}`, args: [{ minAgeSeconds: 0 }],
  });

  it('gives the hold back (with the key\'s reserved credits) when a run is cancelled', async () => {
    const tenant = await gateway.newTenant({ credits: 100, quotas: { costCap: 50 } });
    const answer = slowChat(tenant);
    const held = await heldOf(tenant.workspaceId);
    expect(await reservedOnKey(tenant.keyId)).to.be.greaterThan(0);

    await client().workflow.getHandle(workflowOf(held.id)).cancel();
    await answer;
    await waitFor('the release', async () => (await reservation(held.id)).status === 'released');
    await expectBooksClosed(tenant, held.id);
    const refund = await db()('credit_ledger').where({ reservation_id: held.id, kind: 'refund' }).first();
    expect(refund.meta).to.deep.equal({ reason: 'request cancelled' });
  });

  it('gives back the hold of a terminated run the API answers before it says so', async () => {
    const tenant = await gateway.newTenant({ credits: 100, quotas: { costCap: 50 } });
    const answer = slowChat(tenant);
    const held = await heldOf(tenant.workspaceId);
    await client().workflow.getHandle(workflowOf(held.id)).terminate('operator stopped it');
    expect((await answer).status).to.equal(503);
    await expectBooksClosed(tenant, held.id);
    const [entry] = await db()('audit_log').where({ subject_type: 'reservation', subject_id: held.id });
    expect(entry).to.include({ workspace_id: tenant.workspaceId, actor: 'system:request-stopped', action: 'reservation.release' });
    expect(entry.data).to.include({ workflowId: workflowOf(held.id), answer: 'request_stopped' });
  });

  it('releases the hold of a terminated run nobody waits for, leaves running ones alone, and records who closed it and why', async () => {
    const tenant = await gateway.newTenant({ credits: 100, quotas: { costCap: 50 } });
    // A run whose API is gone (started directly here): nobody answers for it, so the sweeper closes its hold.
    const requestId = randomUUID();
    const input: ModelRequestInput = {
      requestId, workspaceId: tenant.workspaceId, apiKeyId: tenant.keyId, endpoint: 'chat.completions', chain: ['sim-chat'], allowedModels: null,
      body: { inline: JSON.parse(chat) }, created: Math.floor(Date.now() / 1000), simulate: { failure: 'slow', delayMs: 30_000 },
    };
    await client().workflow.start('modelRequestWorkflow', {
      taskQueue, workflowId: `req-${requestId}`, args: [input],
      typedSearchAttributes: requestSearchAttributes({ requestId, workspaceId: tenant.workspaceId, apiKeyId: tenant.keyId, model: 'sim-chat', endpoint: 'chat.completions' }),
    });
    const held = await heldOf(tenant.workspaceId);
    await client().workflow.getHandle(workflowOf(held.id)).terminate('operator stopped it');
    expect((await reservation(held.id)).status).to.equal('held');

    const other = await gateway.newTenant({ credits: 100 });
    const stillRunning = slowChat(other);
    const running = await heldOf(other.workspaceId);

    const swept = await sweep();
    expect(swept.released).to.be.at.least(1);
    expect(swept.stillRunning).to.be.at.least(1);
    await expectBooksClosed(tenant, held.id);
    expect((await reservation(running.id)).status).to.equal('held');
    const [entry] = await db()('audit_log').where({ subject_type: 'reservation', subject_id: held.id });
    expect(entry).to.include({ workspace_id: tenant.workspaceId, actor: 'system:hold-sweeper', action: 'reservation.release' });
    expect(entry.data).to.include({ workflowId: workflowOf(held.id), workflowStatus: 'TERMINATED' });
    expect(entry.data.reason).to.match(/terminated/);

    await client().workflow.getHandle(workflowOf(running.id)).cancel();
    await stillRunning;
    await waitFor('the running hold to end', async () => (await reservation(running.id)).status === 'released');
  });

  it("leaves the hold of a batch's line to its batch's run while it goes on, and releases it once that run is terminated", async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const line = { custom_id: 'slow', method: 'POST', url: '/v1/chat/completions', body: { model: 'sim-chat-slow', max_tokens: 16, messages: [{ role: 'user', content: 'take your time' }] } };
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob([`${JSON.stringify(line)}\n`], { type: 'application/jsonl' }), 'batch.jsonl');
    const file = (await (await tenant.fetch('/v1/files', { method: 'POST', body: form })).json()) as { id: string };
    const created = await tenant.fetch('/v1/batches', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    });
    const batchId = ((await created.json()) as { id: string }).id;
    const held = await heldOf(tenant.workspaceId);
    // Named after the line, served inside the batch's run (no run of the line's own).
    expect(held.id).to.equal(`batch-${batchId}-line-0:0`);

    expect((await sweep()).stillRunning).to.be.at.least(1);
    expect((await reservation(held.id)).status).to.equal('held');

    await client().workflow.getHandle(`batch-${batchId}`).terminate('operator stopped it');
    expect((await sweep()).released).to.be.at.least(1);
    await expectBooksClosed(tenant, held.id);
    const [entry] = await db()('audit_log').where({ subject_type: 'reservation', subject_id: held.id });
    expect(entry).to.include({ actor: 'system:hold-sweeper', action: 'reservation.release' });
    expect(entry.data).to.include({ workflowId: `batch-${batchId}`, workflowStatus: 'TERMINATED' });
  });

  it('runs the sweeper on a schedule of its own task queue, every period the worker was configured with', async () => {
    const schedule = await client().schedule.getHandle(HOLD_SWEEPER_SCHEDULE_ID).describe();
    expect(schedule.action.workflowType).to.equal('holdSweeperWorkflow');
    expect(schedule.action.taskQueue).to.equal(SCHEDULED_TASK_QUEUE);
    expect(schedule.spec.intervals?.map((i) => i.every)).to.deep.equal([loadConfig().holdSweep.everySeconds * 1000]);
    expect(schedule.action.type === 'startWorkflow' && schedule.action.args).to.deep.equal([{ minAgeSeconds: loadConfig().holdSweep.minAgeSeconds }]);
  });
});
