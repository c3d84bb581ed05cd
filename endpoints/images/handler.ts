/**
 * `POST /v1/images/generations` and `POST /v1/images/edits` as endpoint handlers.
 *
 * Delivery: `response_format: url` (the default) stores each image in our bucket and answers a signed URL
 * valid for about an hour; `b64_json` answers the bytes inline. Families that always answer base64
 * upstream (GPT Image) answer `b64_json` and take no `response_format`, as OpenAI's endpoint does. Whatever
 * the client asked for, DALL·E is asked for `b64_json`: we keep the bytes ourselves instead of fetching
 * the provider's URL afterwards (a provider that answers a URL anyway is fetched).
 */
import { validateModelParams } from '../../catalog/params';
import { imageCost } from '../../catalog/pricing';
import type { ModelRecord } from '../../catalog/types';
import { IMAGE_REQUEST_FIELDS, type ImageEditBody, type ImageGenerationBody } from './body';
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import type { ImageResult } from '../../providers/types';
import { callContext, imageBytes, jsonResponse, readUpload, signedResultUrl, storeResult } from '../media';
import { imagesUsage, responseFields } from './openai-fields';
import { modelAdapter } from '../model-adapter';
import type { CallEnv, CallOutcome, EndpointHandler } from '../types';

/** Families whose upstream always answers base64 (catalog/README.md, "Image families"). */
const ALWAYS_BASE64_FAMILIES = new Set(['gpt-image']);

/** Upstream-only parameters the gateway decides itself. */
const GATEWAY_DECIDED = new Set(['response_format', 'stream', 'partial_images']);

/** The optional, model-specific parameters of an image request (everything but the plumbing). */
export function imageModelParams(body: ImageGenerationBody): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (!IMAGE_REQUEST_FIELDS.has(name) && value !== undefined && value !== null) params[name] = value;
  }
  return params;
}

export type ImageDelivery = 'url' | 'b64_json';

export function imageDelivery(record: ModelRecord, params: Record<string, unknown>): ImageDelivery {
  if (params.response_format === 'b64_json' || params.response_format === 'url') return params.response_format;
  return record.family && ALWAYS_BASE64_FAMILIES.has(record.family) ? 'b64_json' : 'url';
}

/** What the request does with images: make them from a prompt, edit given ones, or vary one. */
export type ImageTask = 'generate' | 'edit' | 'variation';

const TASK_CAPABILITY: Record<Exclude<ImageTask, 'generate'>, { capability: 'imageEdit' | 'imageVariation'; what: string }> = {
  edit: { capability: 'imageEdit', what: 'image edits' },
  variation: { capability: 'imageVariation', what: 'image variations' },
};

function checkImageRequest(record: ModelRecord, body: ImageGenerationBody, task: ImageTask): Record<string, unknown> {
  const needs = task === 'generate' ? null : TASK_CAPABILITY[task];
  if (needs && !record.capabilities[needs.capability]) {
    throw new InvalidRequestError(`Model '${record.slug}' does not support ${needs.what}; use an image model with the ${needs.capability} capability (GET /v1/models?modality=image).`, { param: 'model', code: 'model_not_supported' });
  }
  if (body.stream && !record.capabilities.streaming) {
    throw new InvalidRequestError(`Model '${record.slug}' does not support 'stream'; send the request without it.`, { param: 'stream', code: 'unsupported_parameter' });
  }
  return validateModelParams(record, imageModelParams(body));
}

function estimate(record: ModelRecord, body: ImageGenerationBody, task: ImageTask): number {
  return imageCost(record, checkImageRequest(record, body, task));
}

async function callImageModel(record: ModelRecord, body: ImageGenerationBody | ImageEditBody, env: CallEnv, task: ImageTask): Promise<CallOutcome> {
  const params = checkImageRequest(record, body, task);
  const delivery = imageDelivery(record, params);
  const { n, size, ...rest } = params;
  const upstreamParams = Object.fromEntries(Object.entries(rest).filter(([name]) => !GATEWAY_DECIDED.has(name)));
  if ('response_format' in record.allowedParams) upstreamParams.response_format = 'b64_json';
  if (body.user !== undefined && env.providers.get(record.provider).family === 'openai-compatible') upstreamParams.user = body.user;
  const request = { prompt: body.prompt, n: typeof n === 'number' ? n : 1, size: typeof size === 'string' ? size : undefined, params: upstreamParams };

  const adapter = modelAdapter(env, record, 'image');
  let result: ImageResult;
  if (task === 'edit') {
    const editBody = body as ImageEditBody;
    if (!adapter.doEdit) throw new InvalidRequestError(`Model '${record.slug}' cannot edit images on this gateway.`, { param: 'model', code: 'model_not_supported' });
    const images = await Promise.all(editBody.image.map((ref) => readUpload(env.storage, ref)));
    const mask = editBody.mask ? await readUpload(env.storage, editBody.mask) : undefined;
    result = await adapter.doEdit({ ...request, images, ...(mask ? { mask } : {}) }, callContext(env));
  } else if (task === 'variation') {
    if (!adapter.doVary) throw new InvalidRequestError(`Model '${record.slug}' cannot make image variations on this gateway.`, { param: 'model', code: 'model_not_supported' });
    const { prompt: _none, ...variation } = request;
    result = await adapter.doVary({ ...variation, image: await readUpload(env.storage, (body as ImageEditBody).image[0]) }, callContext(env));
  } else {
    result = await adapter.doGenerate(request, callContext(env));
  }

  const data: Array<Record<string, unknown>> = [];
  for (const [index, image] of result.images.entries()) {
    const bytes = await imageBytes(record, image, env);
    const key = await storeResult(env.storage, env.requestId, `image-${index}`, bytes, image.mediaType);
    // Variations have no prompt to revise.
    const revised = image.revisedPrompt ?? body.prompt;
    const revisedPrompt = revised !== undefined ? { revised_prompt: revised } : {};
    data.push(delivery === 'url'
      ? { url: await signedResultUrl(env.storage, key, image.mediaType), ...revisedPrompt }
      : { b64_json: bytes.toString('base64'), ...revisedPrompt });
  }

  // Settled from what was produced: the images that came back, at the requested size and quality.
  const chargeMicro = imageCost(record, { ...params, n: result.images.length });
  // GPT Image's answers say what was rendered (as OpenAI's do); the DALL·E line's do not.
  const echoes = record.family && ALWAYS_BASE64_FAMILIES.has(record.family);
  const response: Record<string, unknown> = { created: env.created, data, ...(echoes ? responseFields(params, result.reported) : {}) };
  if (result.usage) response.usage = imagesUsage(result.usage);
  response.credits_used = microToCredits(chargeMicro);
  return {
    response: await jsonResponse(env.storage, env.requestId, response, delivery === 'b64_json'),
    chargeMicro,
    usage: { inputTokens: result.usage?.inputTokens ?? 0, outputTokens: result.usage?.outputTokens ?? 0, units: { images: result.images.length } },
  };
}

function imageHandler<Body extends ImageGenerationBody>(endpoint: EndpointHandler['endpoint'], task: ImageTask): EndpointHandler<Body> {
  return {
    endpoint,
    modality: 'image',
    check: (record, body) => void checkImageRequest(record, body, task),
    estimate: (record, body) => estimate(record, body, task),
    call: (record, body, env) => callImageModel(record, body, env, task),
  };
}

export const imageGenerationsHandler = imageHandler<ImageGenerationBody>('images.generations', 'generate');
export const imageEditsHandler = imageHandler<ImageEditBody>('images.edits', 'edit');
/** The body carries the one input image as `image[0]` (no prompt). */
export const imageVariationsHandler = imageHandler<ImageEditBody>('images.variations', 'variation');
