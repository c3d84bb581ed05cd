/**
 * Admin CLI commands for plans, the monthly grant schedule and budget alerts. JSON on stdout like every
 * other command; `schedule ...` also talks to Temporal (TEMPORAL_ADDRESS, default 127.0.0.1:7233 as
 * `npm start` runs it).
 */
import type { Knex } from 'knex';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { AesGcmPayloadCodec, gatewayDataConverter, resolveCodecKeys } from '../infra/payload-codec';
import { temporalConnectionOptions } from '../infra/temporal';
import { cycleOf, isCycle } from '../domain/billing-cycle';
import { budgetAlertView, budgetAlertViews, createBudgetAlert, deleteBudgetAlert, type AlertChannels } from '../domain/budget-alerts';
import { microToCredits } from '../core/money';
import { listPlans, setWorkspacePlan } from '../domain/plans';
import { MONTHLY_GRANT_SCHEDULE_ID, runGrantCycle } from '../worker/grant-schedule';
import { SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import { parseFlags, UsageError } from './args';

type Command = (db: Knex, argv: string[]) => Promise<unknown>;

async function withTemporal<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const address = config.temporalAddress ?? '127.0.0.1:7233';
  let connection: Connection;
  try {
    connection = await Connection.connect({ address, connectTimeout: '10 seconds', ...temporalConnectionOptions(config.temporalTls) });
  } catch (err) {
    throw new UsageError(`cannot reach Temporal at ${address} (${err instanceof Error ? err.message : String(err)}). Start the gateway (npm start) or set TEMPORAL_ADDRESS.`);
  }
  try {
    const dataConverter = gatewayDataConverter(new AesGcmPayloadCodec(resolveCodecKeys(config)));
    return await fn(new Client({ connection, namespace: config.temporalNamespace, dataConverter }));
  } finally {
    await connection.close();
  }
}

export const BILLING_COMMANDS: Record<string, Command> = {
  'plans list': async (db) => ({
    data: (await listPlans(db)).map((p) => ({
      id: p.id, name: p.name, monthly_credits: microToCredits(p.monthlyCreditsMicro), rpm_preset: p.rpmPreset, daily_token_cap: p.dailyTokenCap,
      storage_limit_bytes: p.storageLimitBytes, rollover: p.rollover, rollover_cap: p.rolloverCapMicro === null ? null : microToCredits(p.rolloverCapMicro),
    })),
  }),

  'workspace set-plan': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true }, plan: { type: 'string', required: true } });
    const planId = f.plan === 'none' ? null : (f.plan as string);
    const changed = await setWorkspacePlan(db, { workspaceId: f.workspace as string, planId, actor: 'cli' });
    return { workspace: changed.workspaceId, plan: changed.planId, previous_plan: changed.previousPlanId };
  },

  'schedule trigger': async (_db, argv) => {
    const f = parseFlags(argv, { cycle: { type: 'string' } });
    const cycle = (f.cycle as string | undefined) ?? cycleOf(new Date());
    if (!isCycle(cycle)) throw new UsageError(`--cycle must be YYYY-MM (e.g. 2026-11), got '${cycle}'`);
    return withTemporal(async (client) => {
      const hint = setTimeout(() => process.stderr.write(`still waiting: is a gateway worker running (it polls task queue '${SCHEDULED_TASK_QUEUE}')?\n`), 15_000);
      try {
        const r = await runGrantCycle(client, { cycle });
        return {
          cycle: r.cycle, workflow_id: r.workflowId, workspaces: r.workspaces, granted: r.granted, already_granted: r.workspaces - r.granted,
          granted_credits: microToCredits(r.grantedMicro), rolled_over_credits: microToCredits(r.rolledOverMicro), expired_credits: microToCredits(r.expiredMicro),
          batches: r.batches, runs: r.runs,
        };
      } finally {
        clearTimeout(hint);
      }
    });
  },

  'schedule describe': async () => withTemporal(async (client) => {
    const d = await client.schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID).describe();
    return {
      id: d.scheduleId, workflow_type: d.action.workflowType, task_queue: d.action.taskQueue, paused: d.state.paused,
      calendars: d.spec.calendars?.map((c) => c.comment ?? c), timezone: d.spec.timezone ?? 'UTC',
      next_runs: d.info.nextActionTimes.slice(0, 3).map((t) => t.toISOString()),
      recent_runs: d.info.recentActions.map((a) => ({ scheduled_at: a.scheduledAt.toISOString(), workflow_id: a.action.workflow.workflowId })),
    };
  }),

  'alerts create': async (db, argv) => {
    const f = parseFlags(argv, {
      workspace: { type: 'string', required: true }, credits: { type: 'number' }, percent: { type: 'number' }, email: { type: 'list' }, webhook: { type: 'string' },
    });
    if ((f.credits === undefined) === (f.percent === undefined)) throw new UsageError('give exactly one of --credits N (spent in the cycle) or --percent P (of the plan\'s monthly credits)');
    const channels: AlertChannels = {};
    if (f.email) channels.email = { to: f.email as string[] };
    if (f.webhook) channels.webhook = { url: f.webhook as string };
    const alert = await createBudgetAlert(db, {
      workspaceId: f.workspace as string, thresholdType: f.credits !== undefined ? 'credits' : 'percent',
      threshold: (f.credits ?? f.percent) as number, channels, actor: 'cli', webhooks: { allowPrivateAddresses: loadConfig().allowPrivateWebhooks },
    });
    return budgetAlertView(alert);
  },

  'alerts list': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true } });
    return { data: await budgetAlertViews(db, f.workspace as string) };
  },

  'alerts delete': async (db, argv) => {
    const f = parseFlags(argv, { workspace: { type: 'string', required: true }, id: { type: 'string', required: true } });
    return deleteBudgetAlert(db, { workspaceId: f.workspace as string, alertId: f.id as string, actor: 'cli' });
  },
};
