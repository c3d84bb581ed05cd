/**
 * The hold sweeper's activity: every held reservation older than the threshold whose workflow is closed
 * (terminated, timed out, failed, or gone from the server) is released, and the release audited. A hold
 * whose run still goes on is left to that run, which closes its own books. Rows of stream progress whose
 * hold has ended go too.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/common';
import { findOldHolds, holdWorkflowId, releaseAbandonedHold } from '../domain/abandoned-holds';
import type { ActivityDeps } from './deps';
import { pruneStreamProgress } from '../domain/stream-progress';
import { batchOfLineWorkflowId, batchWorkflowId } from '../workflows/contracts';
import { failStoppedVideoJob } from '../domain/video-jobs';

export const HOLD_SWEEPER_ACTOR = 'system:hold-sweeper';

export interface SweepInput {
  /** Holds younger than this are not looked at (their runs are almost always still going). */
  minAgeSeconds: number;
  /** Holds looked at per run (the next run takes the rest). */
  limit?: number;
}

export interface SweepResult {
  checked: number;
  released: number;
  stillRunning: number;
  /** Rows of stream progress left by streams whose process died, dropped once their hold ended (absent in runs before it). */
  progressPruned?: number;
}

export function createHoldActivities(deps: Pick<ActivityDeps, 'db'>) {
  /** The status of a workflow's latest run (`NOT_FOUND` when there is none). */
  async function statusOf(workflowId: string): Promise<string> {
    try {
      return (await Context.current().client.workflow.getHandle(workflowId).describe()).status.name;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return 'NOT_FOUND';
    }
  }

  return {
    async sweepAbandonedHolds(input: SweepInput): Promise<SweepResult> {
      const holds = await findOldHolds(deps.db, { minAgeSeconds: input.minAgeSeconds, limit: input.limit ?? 500 });
      const result: SweepResult = { checked: holds.length, released: 0, stillRunning: 0 };
      for (const hold of holds) {
        Context.current().heartbeat();
        const workflowId = holdWorkflowId(hold.id);
        let owner = workflowId;
        let workflowStatus = await statusOf(owner);
        // A batch's line served inside its batch's run has no run of its own: the batch's run holds its hold.
        const batchId = batchOfLineWorkflowId(workflowId);
        if (workflowStatus === 'NOT_FOUND' && batchId) {
          owner = batchWorkflowId(batchId);
          workflowStatus = await statusOf(owner);
        }
        if (workflowStatus === 'RUNNING') {
          result.stillRunning += 1;
          continue;
        }
        const released = await releaseAbandonedHold(deps.db, {
          reservationId: hold.id, actor: HOLD_SWEEPER_ACTOR,
          reason: `its workflow ended without closing it (${workflowStatus.toLowerCase()})`,
          data: { workflowId: owner, workflowStatus },
        });
        if (released) result.released += 1;
        // A video job's run (its id is the job's) that ended this way never finished its job: it fails now.
        await failStoppedVideoJob(deps.db, { jobId: workflowId, workflowStatus, actor: HOLD_SWEEPER_ACTOR });
      }
      result.progressPruned = await pruneStreamProgress(deps.db, input.minAgeSeconds);
      return result;
    },
  };
}
