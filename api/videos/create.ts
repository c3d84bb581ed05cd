/**
 * `POST /v1/videos/generations`: checks the request against the model (the catalog's allowedParams), takes
 * the reference image in (fetched or decoded, stored in our bucket), records the job as `queued` and starts
 * its workflow (workflow id = job id), then answers at once. Everything the workflow needs is kept on the
 * job row, so an Idempotency-Key replay can finish a creation that was cut short (the row and the start
 * are both idempotent).
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { validateModelParams } from '../../catalog/params';
import { videoCost } from '../../catalog/pricing';
import type { ModelRecord } from '../../catalog/types';
import { InsufficientCreditsError, InvalidRequestError, NotFoundError } from '../../core/errors';
import { newId } from '../../core/ids';
import { costCapExceeded, getBalance } from '../../domain/ledger';
import { createVideoJob, discardQueuedVideoJob, findVideoJob, type VideoJob, type VideoJobSpec } from '../../domain/video-jobs';
import { getFallbackChain } from '../../domain/workspaces';
import type { VideoGenerationInput, videoGenerationWorkflow } from '../../workflows/video-generation';
import { checkUsable, eligibleModel } from '../../domain/model-eligibility';
import { modelAccessOf } from '../http/model-access';
import type { AppDeps, GatewayContext } from '../http/context';
import { canonicalJson, claimIdempotencyKey, readIdempotencyKey, sha256 } from '../../domain/idempotency';
import { readJsonBody } from '../http/body';
import { simulationDirective } from '../requests/start';
import { validateVideoGenerationBody, videoModelParams, videoSize, type VideoGenerationBody } from '../../endpoints/videos/body';
import { requestSearchAttributes } from '../requests/workflow-ids';
import { loadReferenceImage } from './reference-image';
import { videoObject } from './object';

export const VIDEO_ENDPOINT = 'videos.generations';

export async function createVideoGeneration(ctx: GatewayContext, deps: AppDeps): Promise<void> {
  const body = validateVideoGenerationBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
  const aliases: Record<string, string> = body.duration === undefined && body.duration_seconds !== undefined ? { duration: 'duration_seconds' } : {};
  const job = await createVideoJobFrom(ctx, deps, body, { aliases });
  ctx.body = await videoObject(deps.storage, job);
}

export interface VideoShapeOptions {
  /** The client's name of each catalog parameter it sent under another (errors name what the client sent). */
  aliases: Record<string, string>;
  /** The `WxH` the client asked for, when it did. */
  size?: string;
}

/**
 * Checks (the model as every request's is: domain/model-eligibility.ts), prices and records the job and starts its workflow (an Idempotency-Key replay returns the job
 * it named). Both API shapes (`/v1/videos/generations` and OpenAI's `/v1/videos`) create jobs here.
 */
export async function createVideoJobFrom(ctx: GatewayContext, deps: AppDeps, body: VideoGenerationBody, shape: VideoShapeOptions): Promise<VideoJob> {
  const { auth } = ctx.state;
  const record = await checkVideoModel(ctx, deps, body.model);
  const params = videoModelParams(body);
  const checked = namedAsSent(shape.aliases, () => validateModelParams(record, params));
  // A request the model could never take is refused as such first, whoever's key would serve it (as api/requests/run.ts).
  await checkUsable(record, modelAccessOf(deps, auth), body.model);
  const cost = videoCost(record, { seconds: Number(checked.duration), resolution: checked.resolution as string | undefined, n: Number(checked.n ?? 1) });

  let jobId = newId('vgen');
  let replay = false;
  const key = readIdempotencyKey(ctx.get('idempotency-key'));
  if (key) {
    const claim = await claimIdempotencyKey(deps.db, {
      workspaceId: auth.workspaceId, scope: VIDEO_ENDPOINT, key, bodyHash: sha256(canonicalJson(body)), prefix: 'vgen', resourceId: jobId,
    });
    jobId = claim.resourceId;
    replay = !claim.first;
  }

  let job = replay ? await findVideoJob(deps.db, auth.workspaceId, jobId) : null;
  const creating = !job;
  if (!job) {
    await checkAffordable(ctx, deps, cost);
    const spec: VideoJobSpec = {
      prompt: body.prompt,
      requested: Object.fromEntries(Object.entries(params).filter(([name]) => name !== 'image_url' && name !== 'image_base64')),
      image: await namedAsSent(shape.aliases, () => storeReferenceImage(deps, auth.workspaceId, jobId, body)),
      chain: [body.model, ...(await getFallbackChain(deps.db, auth.workspaceId, body.model))],
      allowedModels: auth.allowedModels,
      simulate: simulationDirective(ctx),
      output: { size: shape.size ?? videoSize(checked), seconds: Number(checked.duration) },
      ...(auth.via === 'session' && auth.userId ? { playground: { userId: auth.userId } } : {}),
    };
    // A member in the Playground spends for the workspace with no key (a session is not a key).
    job = await createVideoJob(deps.db, { id: jobId, workspaceId: auth.workspaceId, apiKeyId: auth.via === 'session' ? null : auth.keyId, model: body.model, spec });
  }
  if (job.status === 'queued') await startJobWorkflow(ctx, deps, job, creating);
  if (replay) ctx.set('x-idempotent-replayed', 'true');
  return job;
}

async function checkVideoModel(ctx: GatewayContext, deps: AppDeps, model: string): Promise<ModelRecord> {
  return eligibleModel(deps.catalog, { model, modality: 'video', allowedModels: ctx.state.auth.allowedModels });
}

/** Runs a check whose refusals name the catalog's parameters, renaming them as the client sent them. */
function namedAsSent<T>(aliases: Record<string, string>, check: () => T): T {
  const rename = (err: unknown): never => {
    if (!(err instanceof InvalidRequestError) || !err.param || !aliases[err.param]) throw err;
    const alias = aliases[err.param];
    throw new InvalidRequestError(err.message.replace(new RegExp(`'${err.param}'`, 'g'), `'${alias}'`), { param: alias, code: err.code });
  };
  try {
    const result = check();
    return result instanceof Promise ? (result.catch(rename) as T) : result;
  } catch (err) {
    return rename(err);
  }
}

/**
 * The job answers at once, so the usual refusals (402, the key's cost cap) are given here from the current
 * balance; the workflow's reservation stays the authority (a job that loses a race for the last credits
 * ends `failed` with `insufficient_credits`, and nothing is charged).
 */
async function checkAffordable(ctx: GatewayContext, deps: AppDeps, costMicro: number): Promise<void> {
  const { auth } = ctx.state;
  if ((await getBalance(deps.db, auth.workspaceId)).totalMicro < costMicro) throw new InsufficientCreditsError();
  if (auth.costCapMicro != null) {
    const keyRow = await deps.db('api_keys').where({ id: auth.keyId }).first('spent_micro', 'reserved_micro');
    const standing = { capMicro: auth.costCapMicro, spentMicro: Number(keyRow.spent_micro), reservedMicro: Number(keyRow.reserved_micro), holdMicro: costMicro };
    if (standing.spentMicro + standing.reservedMicro + costMicro > auth.costCapMicro) throw costCapExceeded(standing);
  }
}

async function storeReferenceImage(deps: AppDeps, workspaceId: string, jobId: string, body: VideoGenerationBody): Promise<VideoJobSpec['image']> {
  const image = await loadReferenceImage(body);
  if (!image) return null;
  const storageKey = `videos/${workspaceId}/${jobId}/reference`;
  await deps.storage.put(storageKey, image.data, { contentType: image.mediaType, contentLength: image.data.length });
  return { storageKey, mediaType: image.mediaType, bytes: image.data.length };
}

/** Starts the job's workflow unless it already runs or ran (replays join it). */
async function startJobWorkflow(ctx: GatewayContext, deps: AppDeps, job: VideoJob, creating: boolean): Promise<void> {
  const input: VideoGenerationInput = { jobId: job.id, workspaceId: job.workspaceId, apiKeyId: job.apiKeyId, spec: job.spec };
  try {
    await deps.temporal.client.workflow.start<typeof videoGenerationWorkflow>('videoGenerationWorkflow', {
      taskQueue: deps.temporal.taskQueue,
      workflowId: job.id,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: requestSearchAttributes({ requestId: ctx.state.requestId, workspaceId: job.workspaceId, apiKeyId: job.apiKeyId ?? undefined, model: job.model, endpoint: VIDEO_ENDPOINT }),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    // Not started: the job is taken back (a workflow that did start after all finds no job and stops uncharged).
    if (creating) await discardQueuedVideoJob(deps.db, job.id).catch(() => undefined);
    throw err;
  }
}
