/**
 * Telling a workspace's automatic top-up workflow that its balance fell below the threshold (after a
 * settlement) or that a top-up's payment failed (a webhook): signal-with-start on the gateway's task queue.
 * A workspace without automatic top-ups, or above its threshold, costs no Temporal call; a failed signal
 * never fails the settlement (the next one signals again).
 */
import type { Client } from '@temporalio/client';
import { belowAutoTopUpThreshold } from '../domain/auto-topup';
import { log } from '../core/log';
import type { Knex } from 'knex';
import { autoTopUpWorkflowId, BALANCE_LOW_SIGNAL, PAYMENT_FAILED_SIGNAL, WorkspaceIdKey, type PaymentFailed } from '../workflows/contracts';

export async function signalAutoTopUp(client: Client, opts: { taskQueue: string; workspaceId: string; failed?: PaymentFailed }): Promise<void> {
  await client.workflow.signalWithStart('autoTopUpWorkflow', {
    workflowId: autoTopUpWorkflowId(opts.workspaceId),
    taskQueue: opts.taskQueue,
    args: [{ workspaceId: opts.workspaceId }],
    signal: opts.failed ? PAYMENT_FAILED_SIGNAL : BALANCE_LOW_SIGNAL,
    signalArgs: (opts.failed ? [opts.failed] : []) as unknown[],
    typedSearchAttributes: [{ key: WorkspaceIdKey, value: opts.workspaceId }],
  });
}

/** After a settlement: signals the workflow when the balance is below an enabled threshold. Never throws. */
export async function signalAutoTopUpIfLow(db: Knex, client: Client | undefined, opts: { taskQueue: string; workspaceId: string }): Promise<void> {
  try {
    if (!(await belowAutoTopUpThreshold(db, opts.workspaceId))) return;
    if (!client) throw new Error('no Temporal client to signal the automatic top-up with');
    await signalAutoTopUp(client, opts);
  } catch (err) {
    log.warn({ err, workspaceId: opts.workspaceId }, 'could not signal the automatic top-up');
  }
}
