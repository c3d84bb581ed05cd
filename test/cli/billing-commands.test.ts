import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { grantKeys } from '../../domain/plan-grants';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { getSharedStack } from '../support/stack';
import { SCHEDULED_TASK_QUEUE } from '../../workflows/contracts';

interface CliResult { code: number; stdout: string; stderr: string; json: any }

describe('admin CLI: plans, the grant schedule and budget alerts (cli/billing-commands)', function () {
  this.timeout(120_000);
  const taskQueue = `cli-grants-${randomBytes(4).toString('hex')}`;
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    // A worker for `schedule trigger` to run on.
    gateway = await startTestGateway({ taskQueue, api: false });
  });
  after(() => gateway?.stop());

  /** The compiled CLI beside this compiled test, run as its own process the way an operator runs it. */
  async function cli(...args: string[]): Promise<CliResult> {
    const stack = await getSharedStack();
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'cli', 'gateway.js'), ...args], {
        env: { ...process.env, DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'error' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c) => { stdout += c; });
      child.stderr.on('data', (c) => { stderr += c; });
      child.on('close', (code) => {
        let json: unknown = null;
        try { json = JSON.parse(stdout); } catch { /* not JSON */ }
        resolve({ code: code ?? -1, stdout, stderr, json });
      });
    });
  }

  it('lists the plans with their presets', async () => {
    const plans = await cli('plans', 'list');
    expect(plans.code, plans.stderr).to.equal(0);
    expect(plans.json.data.map((p: any) => [p.id, p.rpm_preset])).to.deep.equal([['free', 30], ['starter', 60], ['pro', 150], ['business', 300], ['enterprise', 400]]);
    expect(plans.json.data.find((p: any) => p.id === 'pro')).to.deep.include({ monthly_credits: 10_000, rollover: true, rollover_cap: 5_000, daily_token_cap: null });
  });

  it('moves a workspace between plans', async () => {
    const ws = await cli('workspace', 'create', '--name', 'Plans', '--plan', 'free');
    const moved = await cli('workspace', 'set-plan', '--workspace', ws.json.id, '--plan', 'business');
    expect(moved.code, moved.stderr).to.equal(0);
    expect(moved.json).to.deep.equal({ workspace: ws.json.id, plan: 'business', previous_plan: 'free' });
    const unknown = await cli('workspace', 'set-plan', '--workspace', ws.json.id, '--plan', 'platinum');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain("No plan 'platinum'");
    const none = await cli('workspace', 'set-plan', '--workspace', ws.json.id, '--plan', 'none');
    expect(none.json).to.include({ plan: null, previous_plan: 'business' });
  });

  it('runs a cycle\'s grant on demand; running it twice grants once', async () => {
    const ws = await cli('workspace', 'create', '--name', 'Triggered', '--plan', 'starter');
    const first = await cli('schedule', 'trigger', '--cycle', '2001-09');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.json).to.include({ cycle: '2001-09', workflow_id: 'credit-grants-2001-09', already_granted: 0 });
    expect(first.json.granted).to.equal(first.json.workspaces).and.to.be.at.least(1);
    const second = await cli('schedule', 'trigger', '--cycle', '2001-09');
    expect(second.code, second.stderr).to.equal(0);
    expect(second.json).to.include({ cycle: '2001-09', granted: 0, granted_credits: 0, already_granted: first.json.workspaces });

    const grants = await gateway.runtime.db('credit_ledger').where({ workspace_id: ws.json.id, kind: 'grant' });
    expect(grants.map((g) => [g.idempotency_key, g.amount_micro])).to.deep.equal([[grantKeys.grant(ws.json.id, '2001-09'), 2_000_000_000]]);
  });

  it('refuses a malformed cycle', async () => {
    const bad = await cli('schedule', 'trigger', '--cycle', '2026-13');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('--cycle must be YYYY-MM');
  });

  it('describes the schedule', async () => {
    const described = await cli('schedule', 'describe');
    expect(described.code, described.stderr).to.equal(0);
    expect(described.json).to.include({ id: 'monthly-credit-grants', workflow_type: 'monthlyCreditGrantsWorkflow', task_queue: SCHEDULED_TASK_QUEUE, paused: false, timezone: 'UTC' });
    expect(described.json.next_runs[0]).to.match(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
  });

  it('creates, lists and deletes budget alerts', async () => {
    const ws = await cli('workspace', 'create', '--name', 'Alerts', '--plan', 'pro');
    const created = await cli('alerts', 'create', '--workspace', ws.json.id, '--percent', '80', '--email', 'ops@example.com,cfo@example.com', '--webhook', 'https://93.184.215.14/T/B/x');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.json).to.deep.include({
      object: 'budget_alert', threshold_type: 'percent', threshold: 80,
      channels: { email: { to: ['ops@example.com', 'cfo@example.com'] }, webhook: { url: 'https://93.184.215.14/T/B/x' } },
    });
    const listed = await cli('alerts', 'list', '--workspace', ws.json.id);
    expect(listed.json.data.map((a: any) => a.id)).to.deep.equal([created.json.id]);
    const deleted = await cli('alerts', 'delete', '--workspace', ws.json.id, '--id', created.json.id);
    expect(deleted.json).to.deep.equal({ id: created.json.id, deleted: true });
    expect((await cli('alerts', 'list', '--workspace', ws.json.id)).json.data).to.deep.equal([]);

    const both = await cli('alerts', 'create', '--workspace', ws.json.id, '--percent', '80', '--credits', '5', '--email', 'a@b.co');
    expect(both.code).to.equal(2);
    const noChannel = await cli('alerts', 'create', '--workspace', ws.json.id, '--credits', '5');
    expect(noChannel.code).to.equal(1);
    expect(noChannel.stderr).to.contain('at least one channel');
  });
});
