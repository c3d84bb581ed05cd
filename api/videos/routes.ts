/**
 * `POST /v1/videos/generations` (a model endpoint: counts against the key's quotas) and
 * `GET /v1/videos/generations/{jobId}` (polling: does not).
 */
import Router from '@koa/router';
import { NotFoundError } from '../../core/errors';
import { findVideoJob } from '../../domain/video-jobs';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { createVideoGeneration } from './create';
import { videoJobHeaders, videoObject } from './object';
import { currentVideoJob } from './stopped';

export function videoGenerationsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/videos/generations', (ctx) => createVideoGeneration(ctx, deps));
  return router;
}

export function videoJobsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/videos/generations/:jobId', requirePermission('jobs.read'), async (ctx) => {
    const found = await findVideoJob(deps.db, ctx.state.auth.workspaceId, ctx.params.jobId);
    // Another workspace's job is exactly as missing as one that never existed.
    if (!found) throw new NotFoundError(`No video generation job '${ctx.params.jobId}'.`, { code: 'video_job_not_found', param: 'job_id' });
    const job = await currentVideoJob(deps, found);
    ctx.set(videoJobHeaders(job));
    ctx.body = await videoObject(deps.storage, job);
  });
  return router;
}
