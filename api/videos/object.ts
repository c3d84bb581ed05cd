/**
 * The job as the API shows it. A finished job's `url` is signed when it is read (valid SIGNED_URL_SECONDS,
 * given in `expires_at`), so every poll gets a fresh link to our own copy of the video, which stays as long
 * as the job does, unlike the provider's temporary URL.
 */
import { microToCredits } from '../../core/money';
import type { VideoJob } from '../../domain/video-jobs';
import type { ObjectStorage } from '../../infra/storage';
import { videoSize } from '../../endpoints/videos/body';

export const SIGNED_URL_SECONDS = 24 * 3600;

export interface VideoGenerationObject {
  id: string;
  object: 'video.generation';
  status: VideoJob['status'];
  progress: number;
  created: number;
  model: string;
  /** The guide's names for `id` and `created`. */
  job_id: string;
  created_at: number;
  url?: string;
  expires_at?: number;
  data?: Array<{ url: string; expires_at: number; duration: number | null }>;
  model_used?: string;
  credits_used?: number;
  completed_at?: number;
  error?: { code: string; message: string };
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

export async function videoObject(storage: ObjectStorage, job: VideoJob, now = Date.now()): Promise<VideoGenerationObject> {
  const created = seconds(job.createdAt);
  const object: VideoGenerationObject = {
    id: job.id, object: 'video.generation', status: job.status, progress: job.progress, created, model: job.model, job_id: job.id, created_at: created,
  };
  if (job.status === 'succeeded') {
    const expiresAt = Math.floor(now / 1000) + SIGNED_URL_SECONDS;
    const data = await Promise.all(job.videos.map(async (video, index) => ({
      url: await storage.signedUrl(video.storageKey, SIGNED_URL_SECONDS, {
        contentType: video.contentType, filename: `${job.id}${job.videos.length > 1 ? `-${index}` : ''}.${video.contentType === 'video/webm' ? 'webm' : 'mp4'}`,
      }),
      expires_at: expiresAt,
      duration: video.durationSeconds,
    })));
    object.url = data[0]?.url;
    object.expires_at = expiresAt;
    if (data.length > 1) object.data = data;
    object.model_used = job.modelUsed ?? job.model;
    object.credits_used = microToCredits(job.creditsMicro);
    if (job.completedAt) object.completed_at = seconds(job.completedAt);
  }
  if (job.status === 'failed' && job.error) object.error = job.error;
  return object;
}

/** The gateway's headers on a finished job's reads (what it cost, which model made it). */
export function videoJobHeaders(job: VideoJob): Record<string, string> {
  if (job.status !== 'succeeded') return {};
  return {
    'x-credits-used': String(microToCredits(job.creditsMicro)),
    'x-model-used': job.modelUsed ?? job.model,
    ...(job.modelUsed && job.modelUsed !== job.model ? { 'x-fallback-from': job.model } : {}),
  };
}

const OPENAI_STATUS: Record<VideoJob['status'], 'queued' | 'in_progress' | 'completed' | 'failed'> = {
  queued: 'queued', processing: 'in_progress', succeeded: 'completed', failed: 'failed',
};

/**
 * The job as OpenAI's video object. Our copy of the video stays as long as the job, so `expires_at` is
 * null; `credits_used` and `model_used` are the gateway's own additions.
 */
export function openAIVideoObject(job: VideoJob) {
  const requested = job.spec.requested;
  return {
    id: job.id,
    object: 'video' as const,
    created_at: seconds(job.createdAt),
    status: OPENAI_STATUS[job.status],
    model: job.model,
    progress: job.progress,
    prompt: job.spec.prompt,
    seconds: String(job.spec.output?.seconds ?? requested.duration ?? ''),
    size: job.spec.output?.size ?? videoSize(requested),
    completed_at: job.completedAt ? seconds(job.completedAt) : null,
    expires_at: null,
    error: job.status === 'failed' ? job.error ?? { code: 'video_generation_failed', message: 'The video could not be made.' } : null,
    remixed_from_video_id: null,
    ...(job.status === 'succeeded' ? { model_used: job.modelUsed ?? job.model, credits_used: microToCredits(job.creditsMicro) } : {}),
  };
}
