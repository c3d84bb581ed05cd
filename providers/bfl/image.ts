/**
 * FLUX generation is a task: `POST /v1/<model>` answers `{id, polling_url}`; polling that URL answers a
 * status until `Ready` carries a short-lived signed `result.sample` URL, whose bytes we download. The
 * submission, the polls and the download share one deadline (the call's timeout), so a task that stays
 * `Pending` ends as a `timeout` rather than holding the attempt forever. n images are n tasks.
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, transportError, upstreamBytes, upstreamJson } from '../http';
import { runAll } from '../run-all';
import type { CallContext, GeneratedImage, ImageGenerateRequest, ImageModelAdapter, ImageResult } from '../types';
import { buildTaskBody, taskBodyFor } from './request';

const FIRST_POLL_DELAY_MS = 250;
const MAX_POLL_DELAY_MS = 2_000;

const MEDIA_TYPE_BY_FORMAT: Record<string, string> = { jpeg: 'image/jpeg', jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp' };

interface SubmittedTask {
  id?: unknown;
  polling_url?: unknown;
}

interface TaskState {
  status?: unknown;
  result?: { sample?: unknown } | null;
}

export class BflImageModel implements ImageModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
    this.connection.assertConfigured();
    const task = new FluxTask(this.connection, this.connection.deadline(ctx));
    const body = buildTaskBody(this.model, req);
    const images = await runAll(Math.max(1, req.n), ctx.signal, (index, signal) =>
      task.generate(this.model, taskBodyFor(body, index), signal));
    return { images };
  }
}

/** One call's worth of FLUX tasks: the host's connection and the deadline they all share. */
class FluxTask {
  private readonly provider: string;

  constructor(private readonly connection: Connection, private readonly deadline: number) {
    this.provider = connection.providerId;
  }

  async generate(model: string, body: Record<string, unknown>, signal: AbortSignal): Promise<GeneratedImage> {
    const pollingUrl = await this.submit(model, body, signal);
    const sampleUrl = await this.waitForSample(pollingUrl, signal);
    return this.download(sampleUrl, body.output_format, signal);
  }

  private async submit(model: string, body: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const { body: task } = await upstreamJson<SubmittedTask>(this.provider, this.connection.url(`/v1/${encodeURIComponent(model)}`), {
      method: 'POST', headers: this.headers(), json: body, signal, timeoutMs: this.remainingMs(),
    });
    expectShape(this.provider, typeof task?.id === 'string' && task.id !== '', 'the task has no id');
    if (typeof task.polling_url === 'string' && isHttpUrl(task.polling_url)) return task.polling_url;
    // Older answers carry only the id; the regional polling URL is the one to use when given.
    return this.connection.url(`/v1/get_result?id=${encodeURIComponent(task.id as string)}`);
  }

  private async waitForSample(pollingUrl: string, signal: AbortSignal): Promise<string> {
    for (let delay = FIRST_POLL_DELAY_MS; ; delay = Math.min(MAX_POLL_DELAY_MS, Math.round(delay * 1.5))) {
      await this.pause(delay, signal);
      const { body: state } = await upstreamJson<TaskState>(this.provider, pollingUrl, {
        headers: this.headers(), signal, timeoutMs: this.remainingMs(),
      });
      expectShape(this.provider, typeof state?.status === 'string', 'the task state has no status');
      switch (state.status) {
        case 'Pending':
          continue;
        case 'Ready': {
          const sample = state.result?.sample;
          expectShape(this.provider, typeof sample === 'string' && isHttpUrl(sample), 'a ready task without a sample URL');
          return sample as string;
        }
        case 'Request Moderated':
          throw this.moderated('the prompt');
        case 'Content Moderated':
          throw this.moderated('the generated image');
        case 'Error':
        case 'Failed':
          throw new UpstreamError(`${this.provider} failed to generate the image`, { kind: 'server_error', provider: this.provider });
        case 'Task not found':
          throw new UpstreamError(`${this.provider} lost the generation task`, { kind: 'server_error', provider: this.provider });
        default:
          expectShape(this.provider, false, `unknown task status ${JSON.stringify(state.status).slice(0, 40)}`);
      }
    }
  }

  private async download(sampleUrl: string, outputFormat: unknown, signal: AbortSignal): Promise<GeneratedImage> {
    // The sample URL is pre-signed on a delivery host: our key stays off it.
    const { data, headers } = await upstreamBytes(this.provider, sampleUrl, { headers: { accept: 'image/*' }, signal, timeoutMs: this.remainingMs() });
    const contentType = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    expectShape(this.provider, data.length > 0 && !contentType.includes('json') && !contentType.startsWith('text/'), 'the sample is not an image');
    return { data, mediaType: contentType.startsWith('image/') && contentType !== 'image/*' ? contentType : mediaTypeFor(outputFormat, sampleUrl) };
  }

  private headers(): Record<string, string> {
    return this.connection.headers({ accept: 'application/json' });
  }

  private moderated(what: string): UpstreamError {
    return new UpstreamError(`${this.provider} refused to deliver the image: its moderation flagged ${what}`, {
      kind: 'caller_error', provider: this.provider, code: 'content_filtered',
    });
  }

  private remainingMs(): number {
    const left = this.deadline - Date.now();
    if (left <= 0) throw new UpstreamError(`${this.provider} did not finish the image in time`, { kind: 'timeout', provider: this.provider });
    return left;
  }

  private async pause(ms: number, signal: AbortSignal): Promise<void> {
    const wait = Math.min(ms, this.remainingMs());
    try {
      await sleep(wait, signal);
    } catch (err) {
      throw transportError(this.provider, err, false, signal);
    }
    this.remainingMs();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(timer); reject(signal.reason); };
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//i.test(value);
}

function mediaTypeFor(outputFormat: unknown, sampleUrl: string): string {
  if (typeof outputFormat === 'string' && MEDIA_TYPE_BY_FORMAT[outputFormat]) return MEDIA_TYPE_BY_FORMAT[outputFormat];
  const extension = /\.([a-z]+)$/i.exec(new URL(sampleUrl).pathname)?.[1]?.toLowerCase();
  return (extension && MEDIA_TYPE_BY_FORMAT[extension]) ?? 'image/jpeg';
}
