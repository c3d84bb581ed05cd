/**
 * Simulated long-running video jobs. The operation id is the job itself (base64url JSON of the request
 * essentials and the submit time), so polling needs no state and survives restarts of any process.
 * A job is `processing` (progress growing with elapsed time) until its ready time, then `succeeded`
 * with the MP4 bytes inline; `-fail*` models end `failed` instead.
 */
import sharp from 'sharp';
import type { CallContext, VideoModelAdapter, VideoPollResult, VideoSubmitRequest } from '../providers/types';
import { directiveFailure, enact, FailureMode, malformedAnswer, ModelVariant, parseModelVariant, rejectRequest } from './behaviour';
import { renderVideo } from './media/video';
import { seedFrom } from './seed';
import type { SimulatedSettings } from './settings';

const OPERATION_PREFIX = 'simvid_';
const DEFAULT_SECONDS = 4;
const DEFAULT_FPS = 8;
const MAX_SECONDS = 60;
const MAX_SIDE = 1920;
const MAX_VIDEOS = 4;
/** Side of the thumbnail of a reference image carried in the operation id. */
const THUMBNAIL_SIDE = 16;

interface VideoJob {
  v: 1;
  /** Seed of the picture (from the prompt and the seed parameter). */
  s: number;
  w: number;
  h: number;
  /** Seconds, frames per second, number of videos. */
  d: number;
  f: number;
  n: number;
  /** Submit time and processing delay, ms. */
  t: number;
  r: number;
  /** Reference image thumbnail: width, height, RGB bytes as base64. */
  i?: [number, number, string];
}

/** Failures that a job reports when polled (`failed`), instead of refusing the submission. */
const JOB_FAILURES: ReadonlySet<FailureMode> = new Set(['429', '500', '503', '400']);

export function createSimulatedVideo(upstreamModel: string, settings: SimulatedSettings): VideoModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  const reject = (message: string, status = 400) => rejectRequest(provider, upstreamModel, message, status);

  return {
    async doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }> {
      // The request's directive acts on the submission; a failing model accepts the job and fails it later.
      const failure = directiveFailure(ctx) ?? callFailure(variant);
      // A slow provider takes the job at once and answers late (a caller that dies meanwhile never learns its id).
      const outcome = failure === 'slow' ? 'answer' : await enact(provider, failure, ctx, settings, upstreamModel);
      if (!req.prompt?.trim() && !req.image) throw reject("'prompt' must not be empty.");
      const seconds = req.durationSeconds ?? DEFAULT_SECONDS;
      if (!(seconds > 0 && seconds <= MAX_SECONDS)) throw reject(`'duration' must be more than 0 and at most ${MAX_SECONDS} seconds.`);
      const fps = typeof req.params.fps === 'number' ? req.params.fps : DEFAULT_FPS;
      if (!(Number.isInteger(fps) && fps >= 1 && fps <= 30)) throw reject("'fps' must be an integer from 1 to 30.");
      const n = req.n ?? 1;
      if (!(Number.isInteger(n) && n >= 1 && n <= MAX_VIDEOS)) throw reject(`'n' must be between 1 and ${MAX_VIDEOS}.`);
      const size = videoSize(req.resolution, req.aspectRatio, reject);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const job: VideoJob = {
        v: 1, s: seedFrom('video', req.prompt ?? '', req.params.seed ?? null), w: size.width, h: size.height,
        d: seconds, f: fps, n, t: settings.now(), r: settings.videoReadyMs,
      };
      if (req.image) job.i = await thumbnail(req.image.data, reject);
      // A repeat under the same idempotency key gets the first job back, not a second one.
      const operationId = settings.submissions.accept(ctx.idempotencyKey, () => OPERATION_PREFIX + Buffer.from(JSON.stringify(job)).toString('base64url'));
      if (failure === 'slow') await enact(provider, failure, ctx, settings, upstreamModel);
      return { operationId };
    },

    async doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult> {
      const outcome = await enact(provider, callFailure(variant), ctx, settings, upstreamModel);
      const job = decodeJob(operationId);
      if (!job) throw reject(`No video job '${operationId.slice(0, 40)}' exists.`, 404);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const elapsed = settings.now() - job.t;
      if (elapsed < job.r) return { status: 'processing', progress: Math.max(0, Math.min(99, Math.floor((elapsed / job.r) * 100))) };
      if (variant.failure && JOB_FAILURES.has(variant.failure)) return failedJob(variant);
      return { status: 'succeeded', videos: await renderJob(job) };
    },
  };
}

/** The model's failure that plays out on every call (timeouts, slowness, garbage), not through the job's state. */
function callFailure(variant: ModelVariant): FailureMode | null {
  return variant.failure && !JOB_FAILURES.has(variant.failure) ? variant.failure : null;
}

function failedJob(variant: ModelVariant): VideoPollResult {
  const failure = variant.failure;
  if (failure === '400') return { status: 'failed', error: 'The video request was rejected by the simulated provider (simulated failure).', retryable: false };
  if (failure === '429') return { status: 'failed', error: 'The simulated provider is out of video capacity (simulated 429).', retryable: true };
  return { status: 'failed', error: `The simulated video job crashed (simulated ${failure}).`, retryable: true };
}

async function renderJob(job: VideoJob) {
  let backgroundRgb: Uint8Array | undefined;
  if (job.i) {
    const [width, height, base64] = job.i;
    backgroundRgb = await sharp(Buffer.from(base64, 'base64'), { raw: { width, height, channels: 3 } })
      .resize(job.w, job.h, { fit: 'fill', kernel: 'cubic' }).raw().toBuffer();
  }
  return Array.from({ length: job.n }, (_, index) => {
    const video = renderVideo({ width: job.w, height: job.h, fps: job.f, seconds: job.d, seed: seedFrom(job.s, index), backgroundRgb });
    return { data: video.data, mediaType: 'video/mp4', durationSeconds: video.seconds };
  });
}

function decodeJob(operationId: string): VideoJob | null {
  if (!operationId.startsWith(OPERATION_PREFIX)) return null;
  try {
    const job = JSON.parse(Buffer.from(operationId.slice(OPERATION_PREFIX.length), 'base64url').toString('utf8')) as VideoJob;
    const numbers = [job.s, job.w, job.h, job.d, job.f, job.n, job.t, job.r];
    if (job.v !== 1 || !numbers.every((x) => typeof x === 'number' && Number.isFinite(x))) return null;
    if (job.w > MAX_SIDE || job.h > MAX_SIDE || job.w < 16 || job.h < 16 || job.n > MAX_VIDEOS || job.d > MAX_SECONDS || job.f > 30) return null;
    return job;
  } catch {
    return null;
  }
}

/**
 * Pixel size: `WxH` as given; `360p`/`480p`/`720p`/`1080p` by the aspect ratio (16:9 by default); with
 * no resolution, a small frame (144 px on the short side) of that aspect ratio.
 */
export function videoSize(resolution: string | undefined, aspectRatio: string | undefined, reject: (m: string) => Error): { width: number; height: number } {
  const ratio = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(aspectRatio ?? '16:9');
  if (!ratio || Number(ratio[1]) <= 0 || Number(ratio[2]) <= 0) throw reject(`Invalid aspect_ratio '${aspectRatio}'.`);
  const wide = Number(ratio[1]) / Number(ratio[2]);
  const even = (x: number) => Math.max(16, Math.round(x / 2) * 2);
  let width: number;
  let height: number;
  const exact = resolution ? /^(\d+)x(\d+)$/.exec(resolution) : null;
  const lines = resolution ? /^(\d+)p$/.exec(resolution) : null;
  if (exact) {
    width = even(Number(exact[1]));
    height = even(Number(exact[2]));
  } else if (lines || !resolution) {
    const short = lines ? Number(lines[1]) : 144;
    width = even(wide >= 1 ? short * wide : short);
    height = even(wide >= 1 ? short : short / wide);
  } else {
    throw reject(`Invalid resolution '${resolution}': use e.g. 480p, 720p or 1280x720.`);
  }
  if (width > MAX_SIDE || height > MAX_SIDE) throw reject(`Resolution ${width}x${height} is larger than the simulated model renders (${MAX_SIDE} px a side).`);
  return { width, height };
}

async function thumbnail(image: Buffer, reject: (m: string) => Error): Promise<[number, number, string]> {
  try {
    const { data, info } = await sharp(image).removeAlpha().resize(THUMBNAIL_SIDE, THUMBNAIL_SIDE, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true });
    return [info.width, info.height, data.toString('base64')];
  } catch {
    throw reject('The reference image could not be decoded.');
  }
}

