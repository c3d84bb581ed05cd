/**
 * `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart, as OpenAI takes it: `image`
 * or `image[]` for several, an optional `mask`, the prompt and the model's parameters). `stream: true`
 * answers an event stream (api/streaming/image-stream.ts).
 */
import Router from '@koa/router';
import { imageModelParams } from '../../endpoints/images/handler';
import { validateModelParams } from '../../catalog/params';
import { InvalidRequestError } from '../../core/errors';
import type { UploadRef } from '../../domain/uploads';
import { sniffImage } from '../../core/media-probe';
import type { AppDeps, GatewayState } from '../http/context';
import { readJsonBody } from '../http/body';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';
import { coerceFormFields } from '../../endpoints/form-values';
import {
  imageEditFieldsSchema, imageVariationFieldsSchema, validateImageEditFields, validateImageGenerationBody, validateImageVariationFields, type ImageEditBody,
} from '../../endpoints/images/body';
import { streamImages } from './stream';
import { contentForIdempotency, receiveUploadForm, type ReceivedUpload } from '../uploads/receive';
import { withUploads } from '../uploads/with-uploads';

/** OpenAI's per-image limit for edits. */
export const MAX_IMAGE_UPLOAD_BYTES = 50 * 1024 * 1024;
/** GPT Image takes up to 16 input images. */
export const MAX_EDIT_IMAGES = 16;

export function imagesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.post('/images/generations', async (ctx) => {
    const body = validateImageGenerationBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const record = await checkRequestedModel(ctx, deps, 'images.generations', body.model, body);
    if (body.stream) {
      await streamImages(ctx, deps, { endpoint: 'images.generations', model: body.model, body, params: validateModelParams(record, imageModelParams(body)) });
      return;
    }
    const result = await runModelRequest(ctx, deps, { endpoint: 'images.generations', model: body.model, body });
    await sendModelResponse(ctx, deps, result);
  });

  router.post('/images/edits', async (ctx) => {
    const imageLimit = Math.min(MAX_IMAGE_UPLOAD_BYTES, deps.config.maxUploadBytes);
    const form = await receiveUploadForm(ctx, deps, { fileBytes: imageLimit, files: MAX_EDIT_IMAGES + 1 });
    await withUploads(deps, form.uploads.map((u) => u.ref), async () => {
      const body = editBody(form.fields, form.uploads);
      const record = await checkRequestedModel(ctx, deps, 'images.edits', body.model, body);
      if (body.stream) {
        await streamImages(ctx, deps, { endpoint: 'images.edits', model: body.model, body, params: validateModelParams(record, imageModelParams(body)) });
        return;
      }
      const result = await runModelRequest(ctx, deps, { endpoint: 'images.edits', model: body.model, body, idempotencyBody: contentForIdempotency(body) });
      await sendModelResponse(ctx, deps, result);
    });
  });

  router.post('/images/variations', async (ctx) => {
    const form = await receiveUploadForm(ctx, deps, { fileBytes: Math.min(MAX_IMAGE_UPLOAD_BYTES, deps.config.maxUploadBytes), files: 1 });
    await withUploads(deps, form.uploads.map((u) => u.ref), async () => {
      const fields = validateImageVariationFields(coerceFormFields(form.fields, imageVariationFieldsSchema.properties));
      const [image] = uploadedImages(form.uploads, ['image']).image;
      if (!image) throw new InvalidRequestError("Missing required parameter: 'image'.", { param: 'image', code: 'missing_required_parameter' });
      const body = { ...fields, image: [image] } as ImageEditBody;
      await checkRequestedModel(ctx, deps, 'images.variations', body.model, body);
      const result = await runModelRequest(ctx, deps, { endpoint: 'images.variations', model: body.model, body, idempotencyBody: contentForIdempotency(body) });
      await sendModelResponse(ctx, deps, result);
    });
  });

  return router;
}

/** The form's files by field, each checked to be an image; any other file field is refused. */
function uploadedImages(uploads: ReceivedUpload[], fields: string[]): Record<string, UploadRef[]> {
  const byField: Record<string, UploadRef[]> = Object.fromEntries(fields.map((f) => [f, []]));
  for (const upload of uploads) {
    if (!fields.includes(upload.field)) {
      throw new InvalidRequestError(`Unexpected file field '${upload.field}': send ${fields.map((f) => `'${f}'`).join(' and ')}.`, { param: upload.field, code: 'unknown_parameter' });
    }
    const mediaType = sniffImage(upload.head);
    if (!mediaType) {
      throw new InvalidRequestError(`Invalid image file '${upload.ref.filename}' in '${upload.field}': expected a PNG, JPEG, WebP or GIF image.`, { param: upload.field, code: 'invalid_image_format' });
    }
    byField[upload.field].push({ ...upload.ref, mediaType });
  }
  return byField;
}

function editBody(fields: Record<string, string | string[]>, uploads: ReceivedUpload[]): ImageEditBody {
  const typed = validateImageEditFields(coerceFormFields(fields, imageEditFieldsSchema.properties));
  const { image: images, mask: masks } = uploadedImages(uploads, ['image', 'mask']);
  if (masks.length > 1) throw new InvalidRequestError('Send at most one mask.', { param: 'mask', code: 'invalid_value' });
  const mask = masks[0];
  if (images.length === 0) throw new InvalidRequestError("Missing required parameter: 'image'.", { param: 'image', code: 'missing_required_parameter' });
  if (images.length > MAX_EDIT_IMAGES) throw new InvalidRequestError(`Too many images: at most ${MAX_EDIT_IMAGES}.`, { param: 'image', code: 'invalid_value' });
  return { ...typed, image: images, ...(mask ? { mask } : {}) };
}

