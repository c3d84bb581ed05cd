/**
 * Runway's task API for video: `POST /v1/text_to_video` or `/v1/image_to_video` creates a task and answers
 * `{ id }`; `GET /v1/tasks/{id}` reports PENDING / THROTTLED / RUNNING (with `progress` 0..1) / SUCCEEDED
 * (with `output`, URLs that expire within 24-48 h) / FAILED (with `failure`, `failureCode`) / CANCELLED.
 */
import { InvalidRequestError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, VideoModelAdapter, VideoPollResult, VideoSubmitRequest } from '../types';
import { runwayRatio } from './ratio';

type TaskStatus = 'PENDING' | 'THROTTLED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

interface RunwayTask {
  id: string;
  status: TaskStatus;
  progress?: number | null;
  output?: unknown;
  failure?: string | null;
  failureCode?: string | null;
}

const TASK_STATUSES: readonly string[] = ['PENDING', 'THROTTLED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];

export class RunwayVideoModel implements VideoModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }> {
    const request = this.connection.request(ctx, { headers: { accept: 'application/json' } });
    if (req.n > 1) {
      throw new InvalidRequestError(`${this.model} generates one video per request; n must be 1`, { param: 'n', code: 'unsupported_value' });
    }
    const promptImage = imageInput(req);
    const path = promptImage ? '/v1/image_to_video' : '/v1/text_to_video';
    const body: Record<string, unknown> = {
      model: this.model,
      ratio: runwayRatio(this.model, req.resolution, req.aspectRatio),
    };
    if (req.prompt) body.promptText = req.prompt;
    if (promptImage) body.promptImage = promptImage;
    if (req.durationSeconds !== undefined) body.duration = Math.round(req.durationSeconds);
    if (typeof req.params.seed === 'number') body.seed = req.params.seed;

    const { body: created } = await upstreamJson<{ id?: unknown }>(this.connection.providerId, this.connection.url(path), {
      ...request,
      method: 'POST',
      json: body,
    });
    expectShape(this.connection.providerId, isObject(created) && typeof created.id === 'string' && created.id !== '', 'task creation without an id');
    return { operationId: created.id as string };
  }

  async doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult> {
    const request = this.connection.request(ctx, { headers: { accept: 'application/json' } });
    const provider = this.connection.providerId;
    const { body: task } = await upstreamJson<RunwayTask>(provider, this.connection.url(`/v1/tasks/${encodeURIComponent(operationId)}`), {
      ...request,
      method: 'GET',
    });
    expectShape(provider, isObject(task) && TASK_STATUSES.includes(task.status), 'task without a known status');

    switch (task.status) {
      case 'PENDING':
      case 'THROTTLED':
        return { status: 'processing' };
      case 'RUNNING':
        return typeof task.progress === 'number' ? { status: 'processing', progress: toPercent(task.progress) } : { status: 'processing' };
      case 'SUCCEEDED': {
        const urls = task.output;
        expectShape(provider, Array.isArray(urls) && urls.length > 0 && urls.every((u) => typeof u === 'string' && u !== ''), 'succeeded task without output URLs');
        return { status: 'succeeded', videos: (urls as string[]).map((url) => ({ url, mediaType: 'video/mp4' })) };
      }
      case 'FAILED':
        return failed(task);
      case 'CANCELLED':
        return { status: 'failed', error: 'The Runway task was cancelled', retryable: false };
    }
  }
}

/** The first frame: our bytes as a data URI (Runway takes them inline up to 5 MB), else a caller's https URL. */
function imageInput(req: VideoSubmitRequest): string | undefined {
  if (req.image) return `data:${req.image.mediaType};base64,${req.image.data.toString('base64')}`;
  const url = req.params.image_url;
  return typeof url === 'string' && url !== '' ? url : undefined;
}

/**
 * Failure codes are dot-separated, most generic first (`SAFETY.INPUT.TEXT`, `INTERNAL.BAD_OUTPUT.CODE01`).
 * Runway's own internal faults may succeed on a new task; moderation and bad assets will not.
 */
function failed(task: RunwayTask): VideoPollResult {
  const code = typeof task.failureCode === 'string' ? task.failureCode : '';
  const reason = typeof task.failure === 'string' && task.failure !== '' ? task.failure : 'The Runway task failed';
  return {
    status: 'failed',
    error: code ? `${reason} (${code})` : reason,
    retryable: code.split('.').includes('INTERNAL'),
  };
}

function toPercent(progress: number): number {
  return Math.max(0, Math.min(100, Math.round(progress * 100)));
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
