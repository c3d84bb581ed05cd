/**
 * Making a batch, whichever API asks: its row (with the key's limits as they are now), then its run. The
 * run's id is the batch's, so a batch has one run, ever.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { newId } from '../../core/ids';
import { failBatch, insertBatch, type BatchRecord, type BatchShape } from '../../domain/batches';
import { BATCH_CANCEL_SIGNAL, batchWorkflowId, WorkspaceIdKey } from '../../workflows/contracts';
import type { batchWorkflow, BatchWorkflowInput } from '../../workflows/batch';
import type { AppDeps, GatewayContext } from '../http/context';

export async function createBatch(ctx: GatewayContext, deps: AppDeps, opts: { shape: BatchShape; endpoint: string; inputFileId: string | null; metadata: Record<string, string> | null; beforeStart?: (batch: BatchRecord) => Promise<void> }): Promise<BatchRecord> {
  const { auth } = ctx.state;
  const batch = await insertBatch(deps.db, {
    id: newId(opts.shape === 'openai' ? 'batch' : 'msgbatch'), workspaceId: auth.workspaceId,
    // A member's session is no key: the lines are theirs, as Playground requests are.
    apiKeyId: auth.via === 'session' ? null : auth.keyId, userId: auth.via === 'session' ? auth.userId : null,
    rpmLimit: auth.via === 'session' ? null : auth.rpmLimit, allowedModels: auth.allowedModels,
    shape: opts.shape, endpoint: opts.endpoint, inputFileId: opts.inputFileId, metadata: opts.metadata,
  }, deps.config.batchWindowMs ?? undefined);
  await opts.beforeStart?.(batch);
  const input: BatchWorkflowInput = {
    batchId: batch.id, expiresAt: batch.expiresAt.getTime(), activityMode: deps.config.activityMode, ...deps.config.batches,
  };
  try {
    await deps.temporal.client.workflow.start<typeof batchWorkflow>('batchWorkflow', {
      taskQueue: deps.temporal.taskQueue, workflowId: batchWorkflowId(batch.id), args: [input],
      typedSearchAttributes: new TypedSearchAttributes([{ key: WorkspaceIdKey, value: auth.workspaceId }]),
    });
  } catch (err) {
    // No run: the batch never starts, and says so (nothing was held).
    await failBatch(deps.db, batch.id, [{ code: 'batch_not_started', message: 'The batch could not be started; create it again.', param: null, line: null }], 0);
    throw err;
  }
  return batch;
}

/** Tells a batch's run to start no more lines (its status says `cancelling` already); a run already over needs no telling. */
export async function signalCancel(deps: AppDeps, batchId: string): Promise<void> {
  try {
    await deps.temporal.client.workflow.getHandle(batchWorkflowId(batchId)).signal(BATCH_CANCEL_SIGNAL);
  } catch (err) {
    if ((err as { name?: string }).name !== 'WorkflowNotFoundError') throw err;
  }
}
