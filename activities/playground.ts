/**
 * The Playground's part of a run that outlives the page: a video job that came from the Playground reports
 * its end, and its chat message is finished right then (video file, status), whether or not anyone reads it.
 */
import { finishVideoMessage } from '../domain/playground-videos';
import type { ActivityDeps } from './deps';
import { heartbeating } from './heartbeat';

export function createPlaygroundActivities(deps: Pick<ActivityDeps, 'db' | 'storage'>) {
  return {
    async finishPlaygroundVideo(input: { jobId: string }): Promise<void> {
      // A large copy heartbeats, so a worker that dies mid-copy is noticed in seconds, not at the timeout.
      const outcome = await heartbeating(() => finishVideoMessage(deps.db, deps.storage, input.jobId));
      // The message is written right after the job starts: a job that ended first finds it on a retry.
      if (outcome === 'no_message') throw new Error(`no Playground message for video job ${input.jobId} yet`);
    },
  };
}
