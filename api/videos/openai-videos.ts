/**
 * OpenAI's video API (`client.videos`): `POST /v1/videos` (JSON, or multipart with an `input_reference`
 * image), `GET /v1/videos`, `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`, `DELETE /v1/videos/{id}`.
 * The same durable jobs as `/v1/videos/generations` (one job, two shapes): either route reads any job.
 */
import Router from '@koa/router';
import { InvalidRequestError, NotFoundError } from '../../core/errors';
import { fileNotFound, findFiles } from '../../domain/files';
import { deleteFinishedVideoJob, findVideoJob, listVideoJobs, type VideoJob } from '../../domain/video-jobs';
import {
  OPENAI_VIDEO_ALIASES, openAIVideoSchema, validateOpenAIVideoBody, videoRequestFromOpenAI, DEFAULT_OPENAI_VIDEO_MODEL, type OpenAIVideoBody,
} from '../../endpoints/videos/body';
import { coerceFormFields } from '../../endpoints/form-values';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayContext, GatewayState } from '../http/context';
import { isMultipart, readMultipart } from '../http/multipart';
import { requirePermission } from '../http/permissions';
import { listObject } from '../../domain/pagination';
import { createVideoJobFrom } from './create';
import { openAIVideoObject, videoJobHeaders } from './object';
import { currentVideoJob } from './stopped';
import { MAX_REFERENCE_IMAGE_BYTES } from './reference-image';

const MAX_LIST_LIMIT = 100;

/** `POST /v1/videos`: a model endpoint (it counts against the key's quotas). */
export function openAIVideoCreateRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/videos', async (ctx) => {
    const { body, upload } = isMultipart(ctx.get('content-type')) ? await readForm(ctx) : { body: validateOpenAIVideoBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes)), upload: null };
    const record = await deps.catalog.get(body.model ?? DEFAULT_OPENAI_VIDEO_MODEL);
    const takes = (param: string) => !record || param in record.allowedParams;
    const request = videoRequestFromOpenAI(body, takes, await referenceImage(ctx, deps, body, upload));
    const job = await createVideoJobFrom(ctx, deps, request, { aliases: OPENAI_VIDEO_ALIASES, size: body.size });
    ctx.body = openAIVideoObject(job);
  });
  return router;
}

/** Reading, listing, downloading and deleting jobs (no quota). */
export function openAIVideoJobsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/videos', requirePermission('jobs.read'), async (ctx) => {
    const page = await listVideoJobs(deps.db, ctx.state.auth.workspaceId, listQuery(ctx));
    if (!page) throw new InvalidRequestError(`Invalid 'after': no video '${ctx.query.after}' to page after.`, { param: 'after', code: 'invalid_value' });
    const data = page.jobs.map(openAIVideoObject);
    ctx.body = listObject(data, page.hasMore);
  });

  router.get('/videos/:videoId', requirePermission('jobs.read'), async (ctx) => {
    const job = await ownJob(ctx, deps);
    ctx.set(videoJobHeaders(job));
    ctx.body = openAIVideoObject(job);
  });

  router.get('/videos/:videoId/content', requirePermission('jobs.read'), async (ctx) => {
    const variant = ctx.query.variant ?? 'video';
    if (variant !== 'video') {
      throw new InvalidRequestError(`Invalid 'variant': only 'video' is kept for this gateway's videos ('${String(variant)}' previews are not made).`, { param: 'variant', code: 'invalid_value' });
    }
    const job = await ownJob(ctx, deps);
    const video = job.status === 'succeeded' ? job.videos[0] : undefined;
    if (!video) throw new InvalidRequestError(`Video '${job.id}' is ${job.status === 'failed' ? 'failed' : 'not finished'}; its content is there once its status is 'completed'.`, { param: 'video_id', code: 'video_not_ready' });
    const object = await deps.storage.get(video.storageKey);
    ctx.set(videoJobHeaders(job));
    ctx.type = video.contentType;
    ctx.length = video.bytes;
    ctx.body = object.body;
  });

  router.delete('/videos/:videoId', requirePermission('files.write'), async (ctx) => {
    const { auth } = ctx.state;
    const outcome = await deleteFinishedVideoJob(deps.db, deps.storage, { workspaceId: auth.workspaceId, jobId: ctx.params.videoId, actor: `api_key:${auth.keyId}` });
    if (outcome === 'missing') throw videoNotFound(ctx.params.videoId);
    if (outcome === 'open') throw new InvalidRequestError(`Video '${ctx.params.videoId}' is still being made; only completed or failed videos can be deleted.`, { param: 'video_id', code: 'video_in_progress' });
    ctx.body = { id: ctx.params.videoId, object: 'video.deleted', deleted: true };
  });

  return router;
}

async function ownJob(ctx: GatewayContext, deps: AppDeps): Promise<VideoJob> {
  const job = await findVideoJob(deps.db, ctx.state.auth.workspaceId, ctx.params.videoId);
  // Another workspace's job is exactly as missing as one that never existed.
  if (!job) throw videoNotFound(ctx.params.videoId);
  return currentVideoJob(deps, job);
}

function videoNotFound(id: string): NotFoundError {
  return new NotFoundError(`No video '${id}'.`, { code: 'video_not_found', param: 'video_id' });
}

function listQuery(ctx: GatewayContext): { after?: string; limit: number; order: 'asc' | 'desc' } {
  const { after, limit, order } = ctx.query;
  const n = limit === undefined ? 20 : Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIST_LIMIT) throw new InvalidRequestError(`Invalid 'limit': an integer from 1 to ${MAX_LIST_LIMIT}.`, { param: 'limit', code: 'invalid_value' });
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw new InvalidRequestError("Invalid 'order': 'asc' or 'desc'.", { param: 'order', code: 'invalid_value' });
  if (after !== undefined && typeof after !== 'string') throw new InvalidRequestError("Invalid 'after'.", { param: 'after', code: 'invalid_value' });
  return { ...(after ? { after } : {}), limit: n, order: order ?? 'desc' };
}

/** The multipart form the official client sends: text fields, and the reference image as `input_reference`. */
async function readForm(ctx: GatewayContext): Promise<{ body: OpenAIVideoBody; upload: Buffer | null }> {
  const form = await readMultipart<{ field: string; data: Buffer }>(ctx.req, {
    limits: { requestBytes: MAX_REFERENCE_IMAGE_BYTES + 256 * 1024, fileBytes: MAX_REFERENCE_IMAGE_BYTES, files: 1 },
    onFile: async (file) => {
      const chunks: Buffer[] = [];
      for await (const chunk of file.stream) chunks.push(chunk as Buffer);
      return { field: file.field, data: Buffer.concat(chunks) };
    },
  });
  const file = form.files[0]?.value;
  if (file && file.field !== 'input_reference') {
    throw new InvalidRequestError(`Unexpected file field '${file.field}': send the reference image as 'input_reference'.`, { param: file.field, code: 'unknown_parameter' });
  }
  return { body: validateOpenAIVideoBody(coerceFormFields(form.fields, openAIVideoSchema.properties)), upload: file?.data ?? null };
}

/** The reference image as the video job takes it: a URL, or the bytes (uploaded, or a file of the workspace's). */
async function referenceImage(ctx: GatewayContext, deps: AppDeps, body: OpenAIVideoBody, upload: Buffer | null): Promise<{ image_url?: string; image_base64?: string }> {
  const reference = body.input_reference;
  if (upload) return { image_base64: upload.toString('base64') };
  if (reference?.image_url && reference.file_id) {
    throw new InvalidRequestError("Give 'input_reference' an image_url or a file_id, not both.", { param: 'input_reference', code: 'invalid_value' });
  }
  if (reference?.image_url) return { image_url: reference.image_url };
  if (!reference?.file_id) return {};
  const file = (await findFiles(deps.db, ctx.state.auth.workspaceId, [reference.file_id])).get(reference.file_id);
  if (!file) throw fileNotFound(reference.file_id, 'input_reference.file_id');
  return { image_base64: (await deps.storage.getBuffer(file.storageKey)).toString('base64') };
}
