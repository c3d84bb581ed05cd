/**
 * The `video_jobs` read model: what GET /v1/videos/generations/{id} shows while the job's workflow runs.
 * The workflow moves it queued -> processing (progress 0..99) -> succeeded (100) | failed; a finished job
 * never moves again. Finishing closes the books in the same transaction: settlement (or the refund), the
 * usage record and the job row move together, so a crash cannot leave a charged job unfinished or a
 * finished job uncharged.
 */
import type { Knex } from 'knex';
import type { ObjectStorage } from '../infra/storage';
import type { SimulationDirective } from '../providers/types';
import { audit } from './audit';
import { releaseHoldsOfRun } from './abandoned-holds';
import { exactCreatedAt, keysetPage, type PageQuery } from './pagination';
import { failRequest, settleRequest, type UsageRecord } from './request-accounting';

export type VideoJobStatus = 'queued' | 'processing' | 'succeeded' | 'failed';

/** Everything the job's workflow needs, kept with the job so the workflow can be (re)started from the row. */
export interface VideoJobSpec {
  prompt: string;
  /** The optional parameters as the client sent them (image fields aside); re-checked for each fallback model. */
  requested: Record<string, unknown>;
  /** The reference image, already in object storage. */
  image: { storageKey: string; mediaType: string; bytes: number } | null;
  /** [requested model, ...its fallback chain]. */
  chain: string[];
  allowedModels: string[] | null;
  simulate?: SimulationDirective;
  /**
   * What the job makes, with the requested model's defaults filled in: the size as `WxH` and the length in
   * seconds (OpenAI's video object reports both). Absent on jobs created before it was kept.
   */
  output?: { size: string; seconds: number };
  /** A job a signed-in member made in the Playground (no key): its usage is theirs, and its end finishes their chat message. */
  playground?: { userId: string };
}

export interface StoredVideo {
  storageKey: string;
  contentType: string;
  bytes: number;
  durationSeconds: number | null;
}

export interface VideoJobError {
  code: string;
  message: string;
}

export interface VideoJob {
  id: string;
  workspaceId: string;
  apiKeyId: string | null;
  model: string;
  status: VideoJobStatus;
  progress: number;
  spec: VideoJobSpec;
  videos: StoredVideo[];
  error: VideoJobError | null;
  modelUsed: string | null;
  creditsMicro: number;
  createdAt: Date;
  completedAt: Date | null;
}

function toJob(row: Record<string, any>): VideoJob {
  return {
    id: row.id, workspaceId: row.workspace_id, apiKeyId: row.api_key_id, model: row.model, status: row.status, progress: row.progress,
    spec: row.request, videos: row.result?.videos ?? [], error: row.error ?? null, modelUsed: row.model_used,
    creditsMicro: Number(row.credits_micro), createdAt: new Date(row.created_at), completedAt: row.completed_at ? new Date(row.completed_at) : null,
  };
}

/** Inserts the job unless it exists (an Idempotency-Key replay), and returns the stored one. */
export async function createVideoJob(db: Knex, job: { id: string; workspaceId: string; apiKeyId: string | null; model: string; spec: VideoJobSpec }): Promise<VideoJob> {
  await db('video_jobs')
    .insert({ id: job.id, workspace_id: job.workspaceId, api_key_id: job.apiKeyId, model: job.model, status: 'queued', progress: 0, request: JSON.stringify(job.spec) })
    .onConflict('id').ignore();
  return (await findVideoJob(db, job.workspaceId, job.id))!;
}

/** Only the workspace's own job (another workspace's id reads as missing). */
export async function findVideoJob(db: Knex, workspaceId: string, jobId: string): Promise<VideoJob | null> {
  const row = await db('video_jobs').where({ id: jobId, workspace_id: workspaceId }).first();
  return row ? toJob(row) : null;
}

/** Removes a job whose workflow could not be started (nothing was reserved or submitted yet). */
export async function discardQueuedVideoJob(db: Knex, jobId: string): Promise<void> {
  await db('video_jobs').where({ id: jobId, status: 'queued' }).delete();
}

const OPEN = ['queued', 'processing'];

/** Whether the job still waits for a result (a job taken back after a failed start is gone). */
export async function isVideoJobOpen(db: Knex, jobId: string): Promise<boolean> {
  return Boolean(await db('video_jobs').where({ id: jobId }).whereIn('status', OPEN).first('id'));
}

/** Keeps the provider's operation id of the job's hop `hop` (before anything else is done with it). */
export async function recordVideoOperation(db: Knex, jobId: string, hop: number, operationId: string): Promise<void> {
  await db('video_jobs').where({ id: jobId }).update({ operation_id: operationId, operation_hop: hop, updated_at: db.fn.now() });
}

/** The operation id the provider gave the job's hop `hop`, if it was already submitted. */
export async function findVideoOperation(db: Knex, jobId: string, hop: number): Promise<string | null> {
  const row = await db('video_jobs').where({ id: jobId, operation_hop: hop }).first('operation_id');
  return row?.operation_id ?? null;
}

/** The provider accepted the job: it is processing on `model`. */
export async function markVideoJobProcessing(db: Knex, jobId: string, model: string): Promise<void> {
  await db('video_jobs').where({ id: jobId }).whereIn('status', OPEN)
    .update({ status: 'processing', model_used: model, updated_at: db.fn.now() });
}

/** Progress only grows, and stays below 100 until the video is stored. */
export async function recordVideoProgress(db: Knex, jobId: string, progress: number): Promise<void> {
  const value = Math.max(0, Math.min(99, Math.floor(progress)));
  await db('video_jobs').where({ id: jobId }).whereIn('status', OPEN)
    .update({ status: 'processing', progress: db.raw('greatest(progress, ?)', [value]), updated_at: db.fn.now() });
}

export async function completeVideoJob(db: Knex, opts: {
  jobId: string; reservationId: string; chargeMicro: number; usage: UsageRecord; model: string; videos: StoredVideo[];
}): Promise<{ chargedMicro: number }> {
  return db.transaction(async (trx) => {
    const settled = await settleRequest(trx, { reservationId: opts.reservationId, chargeMicro: opts.chargeMicro, usage: opts.usage });
    await trx('video_jobs').where({ id: opts.jobId }).whereIn('status', OPEN).update({
      status: 'succeeded', progress: 100, result: JSON.stringify({ videos: opts.videos }), model_used: opts.model,
      credits_micro: settled.chargedMicro, updated_at: trx.fn.now(), completed_at: trx.fn.now(),
    });
    return { chargedMicro: settled.chargedMicro };
  });
}

/** Refunds the hold (if one was taken), records the failure and fails the job. */
export async function failVideoJob(db: Knex, opts: { jobId: string; reservationId: string | null; error: VideoJobError; usage: UsageRecord }): Promise<void> {
  await db.transaction(async (trx) => {
    await failRequest(trx, { reservationId: opts.reservationId, reason: opts.error.message, usage: { ...opts.usage, errorCode: opts.error.code } });
    await trx('video_jobs').where({ id: opts.jobId }).whereIn('status', OPEN).update({
      status: 'failed', error: JSON.stringify(opts.error), credits_micro: 0, updated_at: trx.fn.now(), completed_at: trx.fn.now(),
    });
  });
}

/**
 * A job whose run ended without finishing it (terminated by an operator, timed out, gone: such a run runs
 * no code of its own) ends `failed` with the reason, its open holds given back (audited as `actor`), so its
 * pollers are told. Whoever sees the run ended first calls it: a poll of the job, or the hold sweeper.
 * False when the job is not open (finished meanwhile, or no such job).
 */
export async function failStoppedVideoJob(db: Knex, opts: { jobId: string; workflowStatus: string; actor: string }): Promise<boolean> {
  const how = opts.workflowStatus === 'TIMED_OUT' ? 'ran out of time' : opts.workflowStatus === 'TERMINATED' ? 'was stopped by an operator' : `ended (${opts.workflowStatus.toLowerCase()})`;
  if (!(await isVideoJobOpen(db, opts.jobId))) return false;
  await releaseHoldsOfRun(db, opts.jobId, { actor: opts.actor, reason: `its job ${how} before it finished`, data: { workflowStatus: opts.workflowStatus } });
  const error: VideoJobError = { code: 'video_job_stopped', message: `The job ${how} before it finished; nothing was charged.` };
  const updated = await db('video_jobs').where({ id: opts.jobId }).whereIn('status', OPEN).update({
    status: 'failed', error: JSON.stringify(error), credits_micro: 0, updated_at: db.fn.now(), completed_at: db.fn.now(),
  });
  return updated > 0;
}

/** One page of the workspace's jobs; null when the cursor names no job (live or deleted). */
export async function listVideoJobs(db: Knex, workspaceId: string, page: PageQuery): Promise<{ jobs: VideoJob[]; hasMore: boolean } | null> {
  const found = await keysetPage<Record<string, any>>(db, db('video_jobs').where({ workspace_id: workspaceId }), page, { table: 'video_jobs', workspaceId, deletedAction: 'video.delete' });
  return found && { jobs: found.rows.map(toJob), hasMore: found.hasMore };
}

/**
 * Deletes a finished job and its stored videos (and reference image); the audit log keeps the record.
 * A job still running is left as it is (`open`); another workspace's or an unknown one is `missing`.
 */
export async function deleteFinishedVideoJob(db: Knex, storage: ObjectStorage, opts: { workspaceId: string; jobId: string; actor: string }): Promise<'deleted' | 'open' | 'missing'> {
  return db.transaction(async (trx) => {
    const row = await trx('video_jobs').where({ id: opts.jobId, workspace_id: opts.workspaceId }).forUpdate().first('*', exactCreatedAt(trx));
    if (!row) return 'missing';
    const job = toJob(row);
    if (OPEN.includes(job.status)) return 'open';
    for (const key of [...job.videos.map((v) => v.storageKey), ...(job.spec.image ? [job.spec.image.storageKey] : [])]) await storage.delete(key);
    await trx('video_jobs').where({ id: job.id }).delete();
    await audit(trx, {
      workspaceId: opts.workspaceId, actor: opts.actor, action: 'video.delete', subjectType: 'video_job', subjectId: job.id,
      data: { model: job.model, model_used: job.modelUsed, status: job.status, credits_micro: job.creditsMicro, created_at_exact: row.created_at_exact },
    });
    return 'deleted';
  });
}
