/**
 * Stable Image generation (`/v2beta/stable-image/generate/{core|ultra|sd3}`) and inpainting
 * (`/v2beta/stable-image/edit/inpaint`), both multipart forms answering one image per call. We ask with
 * `accept: image/*`, so the answer is the image bytes with `finish-reason` (SUCCESS, CONTENT_FILTERED)
 * and `seed` headers, rather than the same bytes base64-encoded in JSON. n images are n calls.
 */
import { UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamBytes, type UpstreamRequest } from '../http';
import { runAll } from '../run-all';
import type { CallContext, GeneratedImage, ImageEditRequest, ImageGenerateRequest, ImageInputFile, ImageModelAdapter, ImageResult } from '../types';
import { INPAINT_PATH, aspectRatioField, commonFields, generateEndpoint, outputFormat, toForm } from './form';
import { toStabilityMask } from './mask';

const MEDIA_TYPE_BY_FORMAT: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

export class StabilityImageModel implements ImageModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
    const request = this.request(ctx);
    const endpoint = generateEndpoint(this.model);
    const format = outputFormat(req);
    const images = await runAll(Math.max(1, req.n), ctx.signal, (index, signal) => {
      const fields = [...commonFields(req, index), ...aspectRatioField(req)];
      if (endpoint.modelField) fields.push(['model', endpoint.modelField]);
      return this.postForm(endpoint.path, toForm(fields), format, request, signal);
    });
    return { images };
  }

  async doEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImageResult> {
    const request = this.request(ctx);
    const provider = this.connection.providerId;
    if (req.images.length !== 1) {
      throw new UpstreamError(`${provider} edits exactly one image; ${req.images.length} were given`, {
        kind: 'caller_error', provider, code: 'invalid_image_count', param: 'image',
      });
    }
    const format = outputFormat(req);
    const files: Array<[string, ImageInputFile]> = [['image', req.images[0]]];
    if (req.mask) files.push(['mask', toStabilityMask(req.mask)]);
    const images = await runAll(Math.max(1, req.n), ctx.signal, (index, signal) =>
      this.postForm(INPAINT_PATH, toForm(commonFields(req, index), files), format, request, signal));
    return { images };
  }

  /** Throws `not_configured` before anything else when the host has no key. */
  private request(ctx: CallContext): UpstreamRequest {
    return this.connection.request(ctx, { method: 'POST', headers: { accept: 'image/*' } });
  }

  private async postForm(path: string, form: FormData, format: string, request: UpstreamRequest, signal: AbortSignal): Promise<GeneratedImage> {
    const provider = this.connection.providerId;
    const { data, headers } = await upstreamBytes(provider, this.connection.url(path), { ...request, body: form, signal });
    const contentType = (headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    expectShape(provider, contentType.startsWith('image/') && data.length > 0, 'the answer is not an image');
    const finishReason = (headers.get('finish-reason') ?? 'SUCCESS').toUpperCase();
    if (finishReason === 'CONTENT_FILTERED') {
      // The bytes are a blurred stand-in, not the requested image: never hand them out as a result.
      throw new UpstreamError(`${provider} withheld the image under its content policy`, { kind: 'caller_error', provider, code: 'content_filtered' });
    }
    if (finishReason !== 'SUCCESS') {
      throw new UpstreamError(`${provider} could not finish the image (${finishReason.slice(0, 40)})`, { kind: 'server_error', provider });
    }
    return { data, mediaType: contentType === 'image/*' ? MEDIA_TYPE_BY_FORMAT[format] ?? 'image/png' : contentType };
  }
}
