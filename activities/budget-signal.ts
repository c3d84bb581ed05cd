/**
 * Telling a workspace's budget watcher that its spend changed, from where it was settled (an activity, with
 * its own client; or a first hop settled in the API process, with `deps.watcherClient`): signal-with-start
 * on the gateway's task queue. A workspace without alerts costs no Temporal call (an
 * in-process cache answers), and a failed signal never fails the settlement: the watcher reads spend from
 * the ledger, so the next settlement's signal catches up.
 */
import { activityInfo, asyncLocalStorage } from '@temporalio/activity';
import { cycleOf } from '../domain/billing-cycle';
import { alertPresence } from '../domain/budget-alerts';
import { log } from '../core/log';
import { settleRequest, type UsageRecord } from '../domain/request-accounting';
import { budgetWatcherId, SPEND_CHANGED_SIGNAL, type SpendChanged } from '../workflows/contracts';
import { WorkspaceIdKey } from '../workflows/contracts';
import type { ActivityDeps } from './deps';
import { signalAutoTopUpIfLow } from './auto-topup-signal';

export async function signalBudgetWatcher(deps: ActivityDeps, workspaceId: string): Promise<{ signalled: boolean }> {
  if (!(await alertPresence.has(deps.db, workspaceId))) return { signalled: false };
  const signal: SpendChanged = { cycle: cycleOf((deps.clock ?? (() => new Date()))()) };
  const client = asyncLocalStorage.getStore()?.client ?? deps.watcherClient;
  if (!client) throw new Error('no Temporal client to signal the budget watcher with');
  await client.workflow.signalWithStart('budgetWatcherWorkflow', {
    workflowId: budgetWatcherId(workspaceId),
    taskQueue: deps.watcherTaskQueue ?? activityInfo().taskQueue,
    args: [{ workspaceId }],
    signal: SPEND_CHANGED_SIGNAL,
    signalArgs: [signal],
    typedSearchAttributes: [{ key: WorkspaceIdKey, value: workspaceId }],
  });
  return { signalled: true };
}

/**
 * Settles a hold at its charge with its usage record, then tells the workspace's budget watcher and its
 * automatic top-up (free without alerts, and without an automatic top-up or above its threshold).
 */
export async function settleAndSignal(deps: ActivityDeps, input: { reservationId: string; chargeMicro: number; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
  const settled = await settleRequest(deps.db, input);
  await signalSettlementWatchers(deps, input.usage.workspaceId);
  return { chargedMicro: settled.chargedMicro };
}

/** What a settlement tells: the budget watcher and the automatic top-up. Never throws. */
export async function signalSettlementWatchers(deps: ActivityDeps, workspaceId: string): Promise<void> {
  await signalBudgetWatcherQuietly(deps, workspaceId);
  const client = asyncLocalStorage.getStore()?.client ?? deps.watcherClient;
  await signalAutoTopUpIfLow(deps.db, client, { taskQueue: deps.watcherTaskQueue ?? activityInfo().taskQueue, workspaceId });
}

export async function signalBudgetWatcherQuietly(deps: ActivityDeps, workspaceId: string): Promise<void> {
  try {
    await signalBudgetWatcher(deps, workspaceId);
  } catch (err) {
    log.warn({ err, workspaceId }, 'could not signal the budget watcher');
  }
}
