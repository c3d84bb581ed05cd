/**
 * What a workspace's budget watcher decides after a settlement: the cycle's spend (from the ledger) and
 * which (alert, channel) pairs are due, i.e. past their threshold and not yet delivered this cycle.
 */
import type { Knex } from 'knex';
import { cycleEnd, cycleStart } from './billing-cycle';
import { toBudgetAlert, type BudgetAlert, type ChannelName, CHANNEL_NAMES, type ThresholdType } from './budget-alerts';
import { getBalance } from './ledger';
import { microToCredits } from '../core/money';
import { planOfWorkspace, type Plan } from './plans';

export interface BudgetAlertPayload {
  alert_id: string;
  workspace: { id: string; name: string };
  cycle: string;
  threshold: { type: ThresholdType; value: number; credits: number };
  /** Credits spent in the cycle when the alert fired. */
  spend: number;
  /** Spendable credits left when the alert fired. */
  balance: number;
  summary: string;
}

export interface DueDelivery {
  alertId: string;
  cycle: string;
  channel: ChannelName;
  payload: BudgetAlertPayload;
  /** How long the delivery retries before it is given up (the worker's setting; absent: the default). */
  giveUpAfterMs?: number;
}

/**
 * Credits charged in the cycle: the `settle` rows dated inside it. (A `refund` row gives back a request's
 * hold, never a settled charge, so it does not lower spend.)
 */
export async function cycleSpendMicro(db: Knex, workspaceId: string, cycle: string): Promise<number> {
  const { rows } = await db.raw(
    `select coalesce(-sum(amount_micro), 0)::bigint as spend from credit_ledger
      where workspace_id = ? and kind = 'settle' and created_at >= ? and created_at < ?`,
    [workspaceId, cycleStart(cycle), cycleEnd(cycle)],
  );
  return Number(rows[0].spend);
}

/** The alert's threshold in micro-credits (null: a percent alert of a workspace without a plan). */
export function thresholdMicro(alert: BudgetAlert, plan: Plan | null): bigint | null {
  if (alert.thresholdType === 'credits') return BigInt(alert.thresholdValue);
  if (!plan) return null;
  // Rounded up: "80%" is reached only when 80% is really spent.
  const scaled = BigInt(plan.monthlyCreditsMicro) * BigInt(alert.thresholdValue);
  return (scaled + 99n) / 100n;
}

export function alertSummary(p: { workspaceName: string; workspaceId: string; cycle: string; spendMicro: number; thresholdMicro: bigint; alert: BudgetAlert; plan: Plan | null; balanceMicro: number }): string {
  const threshold = microToCredits(Number(p.thresholdMicro));
  const of = p.alert.thresholdType === 'percent' && p.plan ? ` (${p.alert.thresholdValue}% of the ${p.plan.name} plan's ${microToCredits(p.plan.monthlyCreditsMicro)} monthly credits)` : '';
  return `Workspace "${p.workspaceName}" (${p.workspaceId}) has spent ${microToCredits(p.spendMicro)} credits in ${p.cycle}, `
    + `reaching its budget alert of ${threshold} credits${of}. Balance: ${microToCredits(p.balanceMicro)} credits.`;
}

export async function dueAlertDeliveries(db: Knex, opts: { workspaceId: string; cycle: string }): Promise<{ spendMicro: number; due: DueDelivery[] }> {
  const alerts = (await db('budget_alerts').where({ workspace_id: opts.workspaceId, enabled: true }).orderBy('created_at')).map(toBudgetAlert);
  if (alerts.length === 0) return { spendMicro: 0, due: [] };
  const spendMicro = await cycleSpendMicro(db, opts.workspaceId, opts.cycle);
  const plan = await planOfWorkspace(db, opts.workspaceId);
  const crossed = alerts
    .map((alert) => ({ alert, threshold: thresholdMicro(alert, plan) }))
    .filter((a): a is { alert: BudgetAlert; threshold: bigint } => a.threshold !== null && BigInt(spendMicro) >= a.threshold);
  if (crossed.length === 0) return { spendMicro, due: [] };

  const delivered = new Set(
    (await db('budget_alert_deliveries').whereIn('alert_id', crossed.map((c) => c.alert.id)).andWhere({ cycle: opts.cycle }).select('alert_id', 'channel'))
      .map((r) => `${r.alert_id}:${r.channel}`),
  );
  const workspace = await db('workspaces').where({ id: opts.workspaceId }).first('name');
  const balanceMicro = (await getBalance(db, opts.workspaceId)).totalMicro;
  const due: DueDelivery[] = [];
  for (const { alert, threshold } of crossed) {
    const payload: BudgetAlertPayload = {
      alert_id: alert.id,
      workspace: { id: opts.workspaceId, name: workspace?.name ?? opts.workspaceId },
      cycle: opts.cycle,
      threshold: { type: alert.thresholdType, value: alert.thresholdType === 'credits' ? microToCredits(alert.thresholdValue) : alert.thresholdValue, credits: microToCredits(Number(threshold)) },
      spend: microToCredits(spendMicro),
      balance: microToCredits(balanceMicro),
      summary: alertSummary({ workspaceName: workspace?.name ?? opts.workspaceId, workspaceId: opts.workspaceId, cycle: opts.cycle, spendMicro, thresholdMicro: threshold, alert, plan, balanceMicro }),
    };
    for (const channel of CHANNEL_NAMES) {
      if (alert.channels[channel] && !delivered.has(`${alert.id}:${channel}`)) due.push({ alertId: alert.id, cycle: opts.cycle, channel, payload });
    }
  }
  return { spendMicro, due };
}
