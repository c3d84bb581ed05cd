/**
 * A video job read while its run is over without having finished it. A run terminated by an operator or
 * stopped by its execution timeout runs no code of its own, so its job would read `queued` or `processing`
 * forever: a poll of an open job asks the server about its run, and one that ended fails the job (with the
 * reason, its hold given back) before it is shown. The hold sweeper does the same for jobs nobody polls.
 */
import { WorkflowNotFoundError } from '@temporalio/common';
import { failStoppedVideoJob, findVideoJob, type VideoJob } from '../../domain/video-jobs';
import type { AppDeps } from '../http/context';

export const VIDEO_POLL_ACTOR = 'system:video-poll';

/** A job that has no run this long after it was made never got one (its start failed without taking it back). */
const NO_RUN_GRACE_MS = 60_000;

export async function currentVideoJob(deps: AppDeps, job: VideoJob): Promise<VideoJob> {
  if (job.status !== 'queued' && job.status !== 'processing') return job;
  let workflowStatus: string;
  try {
    workflowStatus = (await deps.temporal.client.workflow.getHandle(job.id).describe()).status.name;
  } catch (err) {
    // The server out of reach: the job is shown as its row says.
    if (!(err instanceof WorkflowNotFoundError) || Date.now() - job.createdAt.getTime() < NO_RUN_GRACE_MS) return job;
    workflowStatus = 'NOT_FOUND';
  }
  if (workflowStatus === 'RUNNING' || workflowStatus === 'COMPLETED' || workflowStatus === 'CONTINUED_AS_NEW') return job;
  await failStoppedVideoJob(deps.db, { jobId: job.id, workflowStatus, actor: VIDEO_POLL_ACTOR });
  return (await findVideoJob(deps.db, job.workspaceId, job.id)) ?? job;
}
