/**
 * Activities of the video generation workflow: price a model for the job, submit it upstream, poll it
 * (writing progress to the read model, and on success copying the videos into our bucket right here, so
 * their bytes never enter workflow history), and close the job's books. Thin over domain/ and the
 * provider adapters; gateway errors leave as ApplicationFailures the workflow can read.
 */
import { activityInfo, Context } from '@temporalio/activity';
import { Readable } from 'node:stream';
import { validateModelParams } from '../catalog/params';
import { videoCost } from '../catalog/pricing';
import type { ModelRecord } from '../catalog/types';
import { GatewayError, InternalError, InvalidRequestError, NotFoundError, UpstreamError } from '../core/errors';
import { eligibleModel } from '../domain/model-eligibility';
import { modelAdapter } from '../endpoints/model-adapter';
import type { UsageRecord } from '../domain/request-accounting';
import type { KeySource } from '../domain/usage-record';
import {
  completeVideoJob, failVideoJob, findVideoOperation, isVideoJobOpen, markVideoJobProcessing, recordVideoOperation, recordVideoProgress,
  type StoredVideo, type VideoJobError, type VideoJobSpec,
} from '../domain/video-jobs';
import type { SimulationDirective, VideoModelAdapter, VideoSubmitRequest } from '../providers/types';
import type { ActivityDeps } from './deps';
import { signalSettlementWatchers } from './budget-signal';
import { heartbeating } from './heartbeat';
import { servingFor } from './requests';

/** Largest video copied from a provider's URL. */
const MAX_VIDEO_BYTES = 2 * 1024 ** 3;
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

export type VideoPlan =
  | { ok: true; estimateMicro: number; params: Record<string, unknown> }
  | { ok: false; error: VideoJobError };

export type VideoPollOutcome =
  | { status: 'processing'; progress: number }
  | { status: 'succeeded'; videos: StoredVideo[] }
  | { status: 'failed'; error: VideoJobError };

/** The model parameters that are not VideoSubmitRequest fields of their own. */
const OWN_FIELDS = new Set(['duration', 'resolution', 'aspect_ratio', 'n', 'person_generation']);

export function createVideoActivities(deps: ActivityDeps) {
  /**
   * The model as this workspace is served it: with its own provider key (priced at the BYOK fee) when it
   * brought one, else the platform's (activities/requests.ts `servingFor`, as every other request).
   */
  async function videoModel(model: string, workspaceId: string): Promise<{ record: ModelRecord; adapter: VideoModelAdapter; keySource: KeySource }> {
    const listed = await deps.catalog.get(model);
    if (!listed) throw new NotFoundError(`The model '${model}' does not exist.`, { code: 'model_not_found', param: 'model' });
    const { providers, record, keySource } = await servingFor(deps, workspaceId, listed);
    return { record, keySource, adapter: modelAdapter({ providers }, record, 'video') };
  }

  async function jobWorkspace(jobId: string): Promise<string> {
    const row = await deps.db('video_jobs').where({ id: jobId }).first('workspace_id');
    if (!row) throw new NotFoundError('The job no longer exists.', { code: 'job_not_found' });
    return row.workspace_id;
  }

  return {
    /** Whether `model` can serve the job and what to hold for it. A model unfit for the job is an outcome, not a failure. */
    async planVideoHop(input: { jobId: string; model: string; spec: VideoJobSpec }): Promise<VideoPlan> {
      if (!(await isVideoJobOpen(deps.db, input.jobId))) return { ok: false, error: { code: 'job_not_found', message: 'The job no longer exists or has already ended.' } };
      try {
        const listed = await eligibleModel(deps.catalog, { model: input.model, modality: 'video', allowedModels: input.spec.allowedModels });
        const { record } = await servingFor(deps, await jobWorkspace(input.jobId), listed);
        if (input.spec.image && !record.capabilities.imageToVideo) {
          throw new InvalidRequestError(`Model '${input.model}' does not take a reference image.`, { code: 'image_not_supported_by_model', param: 'image_url' });
        }
        const params = validateModelParams(record, input.spec.requested);
        return { ok: true, params, estimateMicro: videoCost(record, priceParams(params)) };
      } catch (err) {
        if (err instanceof GatewayError) return { ok: false, error: { code: err.code ?? 'invalid_request', message: err.message } };
        throw err;
      }
    },

    /**
     * Submits the job's hop `depth` once: a hop already submitted (the activity ran before and its worker died)
     * returns the kept operation id; a new submission carries an idempotency key (so a provider that takes
     * one returns the first job to a repeat) and its operation id is kept before anything else.
     */
    async submitVideo(input: { jobId: string; depth?: number; model: string; spec: VideoJobSpec; params: Record<string, unknown>; simulate?: SimulationDirective }): Promise<{ operationId: string }> {
      const attempt = activityInfo().attempt;
      const depth = input.depth ?? 0;
      return heartbeating(async () => {
        const kept = await findVideoOperation(deps.db, input.jobId, depth);
        if (kept) return { operationId: kept };
        const { adapter } = await videoModel(input.model, await jobWorkspace(input.jobId));
        const image = input.spec.image ? { data: await deps.storage.getBuffer(input.spec.image.storageKey), mediaType: input.spec.image.mediaType } : undefined;
        const { operationId } = await adapter.doSubmit(toSubmitRequest(input.spec.prompt, input.params, image), {
          requestId: input.jobId, signal: Context.current().cancellationSignal, idempotencyKey: `${input.jobId}:${depth}`,
          simulate: input.simulate ? { ...input.simulate, attempt } : undefined,
        });
        await recordVideoOperation(deps.db, input.jobId, depth, operationId);
        return { operationId };
      });
    },

    /** One look at the upstream job; on success the videos are copied into our bucket before returning. */
    async pollVideo(input: { jobId: string; workspaceId: string; model: string; operationId: string }): Promise<VideoPollOutcome> {
      return heartbeating(() => pollOnce(input));
    },

    async markVideoJobProcessing(input: { jobId: string; model: string }): Promise<void> {
      await markVideoJobProcessing(deps.db, input.jobId, input.model);
    },

    /** Settles at the exact price of what was produced and finishes the job (one transaction). */
    async completeVideoJob(input: { jobId: string; reservationId: string; model: string; params: Record<string, unknown>; videos: StoredVideo[]; usage: UsageRecord }): Promise<{ chargedMicro: number }> {
      const listed = await deps.catalog.get(input.model);
      if (!listed) throw new InternalError(`model ${input.model} vanished from the catalog`);
      const { record, keySource } = await servingFor(deps, input.usage.workspaceId, listed);
      const requestedSeconds = priceParams(input.params).seconds;
      // Each video at the requested length, or shorter when the provider says it made a shorter one.
      const chargeMicro = input.videos.reduce((sum, v) => sum + videoCost(record, {
        ...priceParams(input.params), n: 1, seconds: v.durationSeconds !== null ? Math.min(v.durationSeconds, requestedSeconds) : requestedSeconds,
      }), 0);
      const seconds = input.videos.reduce((sum, v) => sum + (v.durationSeconds ?? requestedSeconds), 0);
      const completed = await completeVideoJob(deps.db, {
        jobId: input.jobId, reservationId: input.reservationId, chargeMicro, model: input.model, videos: input.videos,
        usage: { ...input.usage, units: { videos: input.videos.length, seconds }, ...(keySource === 'workspace' ? { keySource } : {}) },
      });
      await signalSettlementWatchers(deps, input.usage.workspaceId);
      return completed;
    },

    async failVideoJob(input: { jobId: string; reservationId: string | null; error: VideoJobError; usage: UsageRecord }): Promise<void> {
      await failVideoJob(deps.db, input);
    },
  };

  /** One look at the upstream job; on success the videos are copied into our bucket before returning. */
  async function pollOnce(input: { jobId: string; workspaceId: string; model: string; operationId: string }): Promise<VideoPollOutcome> {
    const { adapter } = await videoModel(input.model, input.workspaceId);
    const signal = Context.current().cancellationSignal;
    const answer = await adapter.doPoll(input.operationId, { requestId: input.jobId, signal });
    if (answer.status === 'processing') {
      const progress = Math.max(0, Math.min(99, Math.floor(answer.progress ?? 0)));
      await recordVideoProgress(deps.db, input.jobId, progress);
      return { status: 'processing', progress };
    }
    if (answer.status === 'failed') {
      return { status: 'failed', error: { code: answer.retryable === false ? 'video_rejected' : 'video_generation_failed', message: answer.error } };
    }
    if (answer.videos.length === 0) throw new UpstreamError('The provider finished the job without a video', { kind: 'bad_response', provider: input.model });
    const videos: StoredVideo[] = [];
    for (const [index, video] of answer.videos.entries()) {
      const contentType = video.mediaType || 'video/mp4';
      const storageKey = `videos/${input.workspaceId}/${input.jobId}/${index}.${contentType === 'video/webm' ? 'webm' : 'mp4'}`;
      let bytes: number;
      if (video.data) {
        await deps.storage.put(storageKey, video.data, { contentType, contentLength: video.data.length });
        bytes = video.data.length;
      } else if (video.url) {
        bytes = await copyFromUrl(video.url, storageKey, contentType, signal);
      } else {
        throw new UpstreamError('The provider reported a video without bytes or a URL', { kind: 'bad_response', provider: input.model });
      }
      Context.current().heartbeat();
      videos.push({ storageKey, contentType, bytes, durationSeconds: video.durationSeconds ?? null });
    }
    return { status: 'succeeded', videos };
  }

  /** Streams a provider-hosted video into our bucket (never whole in memory). */
  async function copyFromUrl(url: string, storageKey: string, contentType: string, signal: AbortSignal): Promise<number> {
    const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)]) });
    if (!res.ok || !res.body) throw new UpstreamError(`Downloading the video failed with HTTP ${res.status}`, { kind: res.status >= 500 ? 'server_error' : 'bad_response', provider: 'video-download', upstreamStatus: res.status });
    let size = 0;
    async function* limited(): AsyncGenerator<Buffer> {
      for await (const chunk of Readable.fromWeb(res.body as any) as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_VIDEO_BYTES) throw new UpstreamError(`The video is larger than ${MAX_VIDEO_BYTES} bytes`, { kind: 'bad_response', provider: 'video-download' });
        yield chunk;
      }
    }
    const stored = await deps.storage.putStream(storageKey, limited(), { contentType });
    return stored.bytes;
  }
}

function priceParams(params: Record<string, unknown>): { seconds: number; resolution?: string; n: number } {
  const seconds = Number(params.duration);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InternalError('a video job has no duration');
  return { seconds, resolution: typeof params.resolution === 'string' ? params.resolution : undefined, n: typeof params.n === 'number' ? params.n : 1 };
}

function toSubmitRequest(prompt: string, params: Record<string, unknown>, image?: { data: Buffer; mediaType: string }): VideoSubmitRequest {
  const extra = Object.fromEntries(Object.entries(params).filter(([name]) => !OWN_FIELDS.has(name)));
  return {
    prompt,
    durationSeconds: Number(params.duration),
    resolution: params.resolution as string | undefined,
    aspectRatio: params.aspect_ratio as string | undefined,
    n: typeof params.n === 'number' ? params.n : 1,
    personGeneration: params.person_generation as VideoSubmitRequest['personGeneration'],
    ...(image ? { image } : {}),
    params: extra,
  };
}
