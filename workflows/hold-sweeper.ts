/**
 * The hold sweeper, run by a Temporal Schedule (worker/schedules.ts): releases every hold whose request
 * ended without closing it. Runs compensate for failures and cancellations themselves; a run terminated
 * by an operator, or stopped by its execution timeout, runs no code of its own, and this closes its hold.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import type { SweepInput, SweepResult } from '../activities/holds';

const sweeper = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function holdSweeperWorkflow(input: SweepInput): Promise<SweepResult> {
  return sweeper.sweepAbandonedHolds(input);
}
