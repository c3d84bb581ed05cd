/**
 * Luma's Dream Machine generations: `POST /dream-machine/v1/generations` answers the generation object
 * (state `queued`), `GET /dream-machine/v1/generations/{id}` reports `queued` / `dreaming` / `completed`
 * (with `assets.video`) / `failed` (with `failure_reason`). Luma reports no progress figure.
 */
import { InvalidRequestError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, VideoModelAdapter, VideoPollResult, VideoSubmitRequest } from '../types';

type GenerationState = 'queued' | 'dreaming' | 'completed' | 'failed';

interface LumaGeneration {
  id: string;
  state: GenerationState;
  failure_reason?: string | null;
  assets?: { video?: string | null } | null;
  request?: { duration?: string | null } | null;
}

const STATES: readonly string[] = ['queued', 'dreaming', 'completed', 'failed'];
const GENERATIONS_PATH = '/dream-machine/v1/generations';

/** Luma names resolutions by tier; a pixel size maps to the tier of its shorter side. */
const TIER_BY_SHORT_SIDE: Record<number, string> = { 540: '540p', 720: '720p', 1080: '1080p', 2160: '4k' };

export class LumaVideoModel implements VideoModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doSubmit(req: VideoSubmitRequest, ctx: CallContext): Promise<{ operationId: string }> {
    const request = this.connection.request(ctx, { headers: { accept: 'application/json' } });
    if (req.n > 1) {
      throw new InvalidRequestError(`${this.model} generates one video per request; n must be 1`, { param: 'n', code: 'unsupported_value' });
    }
    const body: Record<string, unknown> = { prompt: req.prompt, model: this.model };
    const resolution = lumaResolution(req.resolution);
    if (resolution) body.resolution = resolution;
    if (req.durationSeconds !== undefined) body.duration = `${Math.round(req.durationSeconds)}s`;
    if (req.aspectRatio) body.aspect_ratio = req.aspectRatio;
    if (typeof req.params.loop === 'boolean') body.loop = req.params.loop;
    const frame0 = this.firstFrameUrl(req);
    if (frame0) body.keyframes = { frame0: { type: 'image', url: frame0 } };

    const { body: generation } = await upstreamJson<Partial<LumaGeneration>>(this.connection.providerId, this.connection.url(GENERATIONS_PATH), {
      ...request,
      method: 'POST',
      json: body,
    });
    expectShape(this.connection.providerId, isObject(generation) && typeof generation.id === 'string' && generation.id !== '', 'generation without an id');
    return { operationId: generation.id as string };
  }

  async doPoll(operationId: string, ctx: CallContext): Promise<VideoPollResult> {
    const request = this.connection.request(ctx, { headers: { accept: 'application/json' } });
    const provider = this.connection.providerId;
    const { body: generation } = await upstreamJson<LumaGeneration>(provider, this.connection.url(`${GENERATIONS_PATH}/${encodeURIComponent(operationId)}`), {
      ...request,
      method: 'GET',
    });
    expectShape(provider, isObject(generation) && STATES.includes(generation.state), 'generation without a known state');

    switch (generation.state) {
      case 'queued':
      case 'dreaming':
        return { status: 'processing' };
      case 'completed': {
        const url = generation.assets?.video;
        expectShape(provider, typeof url === 'string' && url !== '', 'completed generation without assets.video');
        const durationSeconds = parseDuration(generation.request?.duration);
        return { status: 'succeeded', videos: [{ url: url as string, mediaType: 'video/mp4', ...(durationSeconds ? { durationSeconds } : {}) }] };
      }
      case 'failed': {
        const reason = typeof generation.failure_reason === 'string' && generation.failure_reason !== '' ? generation.failure_reason : 'The Luma generation failed';
        return { status: 'failed', error: reason, retryable: false };
      }
    }
  }

  /**
   * Luma fetches keyframe images itself and takes only URLs ("upload and use your own cdn image urls,
   * currently this is the only way to pass an image"): an image_url passes through, while inline bytes
   * (image_base64) would first need hosting somewhere Luma can reach, which this adapter does not do.
   */
  private firstFrameUrl(req: VideoSubmitRequest): string | undefined {
    const url = req.params.image_url;
    if (typeof url === 'string' && url !== '') return url;
    if (req.image) {
      throw new InvalidRequestError(`${this.model} takes a reference image only as image_url (a public https URL), not as image_base64`, {
        param: 'image_base64', code: 'unsupported_parameter',
      });
    }
    return undefined;
  }
}

function lumaResolution(resolution: string | undefined): string | undefined {
  const value = resolution?.trim().toLowerCase();
  if (!value) return undefined;
  const pixels = value.match(/^(\d+)\s*[x:]\s*(\d+)$/);
  if (!pixels) return value;
  const tier = TIER_BY_SHORT_SIDE[Math.min(Number(pixels[1]), Number(pixels[2]))];
  if (!tier) throw new InvalidRequestError(`resolution ${resolution} is not available for Luma models`, { param: 'resolution', code: 'unsupported_value' });
  return tier;
}

/** `"5s"` -> 5; anything else is left unknown. */
function parseDuration(value: string | null | undefined): number | undefined {
  const match = typeof value === 'string' ? value.match(/^(\d+(?:\.\d+)?)s$/) : null;
  return match ? Number(match[1]) : undefined;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
