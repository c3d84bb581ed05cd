/**
 * Making a batch, whichever API asks: its row (with the key's limits as they are now), then its run. The
 * run's id is the batch's, so a batch has one run, ever. An `Idempotency-Key` names the batch: the same key
 * and body again answer the batch it made; another body with it is refused (domain/idempotency.ts).
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { ConflictError } from '../../core/errors';
import { newId } from '../../core/ids';
import { failBatch, findBatch, insertBatch, type BatchRecord, type BatchShape } from '../../domain/batches';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { BATCH_CANCEL_SIGNAL, batchWorkflowId, WorkspaceIdKey } from '../../workflows/contracts';
import type { batchWorkflow, BatchWorkflowInput } from '../../workflows/batch';
import type { AppDeps, GatewayContext } from '../http/context';

/**
 * The id a new batch takes, or (`replay`) the batch an earlier request with the same `Idempotency-Key` and
 * body made. A key whose first request made nothing (Anthropic's requests refused) makes it now, under that id.
 */
export async function claimBatchId(ctx: GatewayContext, deps: AppDeps, shape: BatchShape, body: unknown): Promise<{ id: string; replay: BatchRecord | null }> {
  const id = newId(shape === 'openai' ? 'batch' : 'msgbatch');
  const key = readIdempotencyKey(ctx.get('idempotency-key'));
  if (!key) return { id, replay: null };
  const { workspaceId } = ctx.state.auth;
  const claim = await claimIdempotencyKey(deps.db, {
    workspaceId, scope: shape === 'openai' ? 'batches' : 'messages.batches', key, bodyHash: sha256(canonicalJson(body)), prefix: 'batch', resourceId: id,
  });
  if (claim.first) return { id, replay: null };
  const replay = await findBatch(deps.db, workspaceId, claim.resourceId, shape);
  if (replay) ctx.set('x-idempotent-replayed', 'true');
  return { id: claim.resourceId, replay };
}

export async function createBatch(ctx: GatewayContext, deps: AppDeps, opts: { id: string; shape: BatchShape; endpoint: string; inputFileId: string | null; metadata: Record<string, string> | null; beforeStart?: (batch: BatchRecord) => Promise<void> }): Promise<BatchRecord> {
  const { auth } = ctx.state;
  const batch = await insertBatch(deps.db, {
    id: opts.id, workspaceId: auth.workspaceId,
    // A member's session is no key: the lines are theirs, as Playground requests are.
    apiKeyId: auth.via === 'session' ? null : auth.keyId, userId: auth.via === 'session' ? auth.userId : null,
    rpmLimit: auth.via === 'session' ? null : auth.rpmLimit, allowedModels: auth.allowedModels,
    shape: opts.shape, endpoint: opts.endpoint, inputFileId: opts.inputFileId, metadata: opts.metadata,
  }, deps.config.batchWindowMs ?? undefined).catch((err: { code?: string }) => {
    // Two requests with one Idempotency-Key at once: the first makes the batch, the other is told to retry.
    if (err.code === '23505') throw new ConflictError('A request with this Idempotency-Key is still being processed; retry it.', { code: 'idempotency_key_in_use', param: 'Idempotency-Key' });
    throw err;
  });
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
