/** Keeping a request's uploads exactly as long as something may still read them. */
import { WorkflowFailedError } from '@temporalio/client';
import { GatewayError } from '../../core/errors';
import type { UploadRef } from '../../domain/uploads';
import type { AppDeps } from '../http/context';
import { deleteUploads } from './receive';

/**
 * Runs a request that reads `refs`, then deletes them once no workflow can need them: after it answered,
 * after a refusal before any workflow started (gateway errors), or after its workflow failed. Anything
 * else (the Temporal connection dropped while waiting) leaves them for the workflow still running.
 */
export async function withUploads(deps: AppDeps, refs: UploadRef[], run: () => Promise<void>): Promise<void> {
  let finished = false;
  try {
    await run();
    finished = true;
  } catch (err) {
    finished = err instanceof GatewayError || err instanceof WorkflowFailedError;
    throw err;
  } finally {
    if (finished) await deleteUploads(deps.storage, refs);
  }
}
