/**
 * The monthly credit grant of one billing cycle, for every workspace on a plan: batches of workspaces
 * (an activity each, keyset pagination by id) with continue-as-new every few batches, so the history
 * stays small however many workspaces there are. Each workspace's grant is idempotent per cycle, so a
 * rerun of the cycle (or an overlap with an on-demand run) grants nothing twice.
 *
 * The cycle is the input's (on-demand runs), else the schedule's scheduled time: never the clock.
 */
import { ApplicationFailure, continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { GatewayActivities } from '../activities';
import { cycleOf, isCycle } from '../domain/billing-cycle';

const grants = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '10 minutes',
  // The batch heartbeats after every workspace; a silent worker is presumed gone.
  heartbeatTimeout: '1 minute',
  // A grant run must finish: retry without limit, backing off to a few minutes.
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export const DEFAULT_BATCH_SIZE = 200;
export const DEFAULT_BATCHES_PER_RUN = 5;

/** Set by Temporal on every run a schedule starts: the action's nominal time. */
const ScheduledStartTimeKey = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

export interface GrantTotals {
  workspaces: number;
  granted: number;
  grantedMicro: number;
  rolledOverMicro: number;
  expiredMicro: number;
  batches: number;
  /** Runs of this chain (1 + continue-as-new count). */
  runs: number;
}

export interface MonthlyCreditGrantsInput {
  /** `YYYY-MM`; absent on scheduled runs, which take the scheduled time's cycle. */
  cycle?: string;
  batchSize?: number;
  batchesPerRun?: number;
  /** Carried across continue-as-new. */
  after?: string | null;
  totals?: GrantTotals;
}

export interface MonthlyCreditGrantsResult extends GrantTotals {
  cycle: string;
}

const ZERO: GrantTotals = { workspaces: 0, granted: 0, grantedMicro: 0, rolledOverMicro: 0, expiredMicro: 0, batches: 0, runs: 1 };

function cycleToRun(input: MonthlyCreditGrantsInput): string {
  if (input.cycle !== undefined) {
    if (!isCycle(input.cycle)) throw ApplicationFailure.nonRetryable(`cycle must be YYYY-MM, got '${input.cycle}'`, 'InvalidCycle');
    return input.cycle;
  }
  const scheduledAt = workflowInfo().typedSearchAttributes.get(ScheduledStartTimeKey);
  if (!scheduledAt) throw ApplicationFailure.nonRetryable('no cycle given and not started by a schedule', 'InvalidCycle');
  return cycleOf(new Date(scheduledAt));
}

export async function monthlyCreditGrantsWorkflow(input: MonthlyCreditGrantsInput = {}): Promise<MonthlyCreditGrantsResult> {
  const cycle = cycleToRun(input);
  const batchSize = input.batchSize ?? DEFAULT_BATCH_SIZE;
  const batchesPerRun = input.batchesPerRun ?? DEFAULT_BATCHES_PER_RUN;
  const totals: GrantTotals = { ...(input.totals ?? ZERO) };
  let after = input.after ?? null;

  for (let i = 0; i < batchesPerRun; i++) {
    const batch = await grants.grantPlanCreditsBatch({ cycle, after, limit: batchSize });
    totals.workspaces += batch.processed;
    totals.granted += batch.granted;
    totals.grantedMicro += batch.grantedMicro;
    totals.rolledOverMicro += batch.rolledOverMicro;
    totals.expiredMicro += batch.expiredMicro;
    totals.batches += 1;
    if (batch.nextAfter === null) return { cycle, ...totals };
    after = batch.nextAfter;
  }
  return continueAsNew<typeof monthlyCreditGrantsWorkflow>({ cycle, batchSize, batchesPerRun, after, totals: { ...totals, runs: totals.runs + 1 } });
}
