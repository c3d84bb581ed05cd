/** `/images/generations` (JSON) and `/images/edits` (multipart), both answering OpenAI's ImagesResponse. */
import type { Connection } from '../connection';
import { expectShape, upstreamJson } from '../http';
import type { CallContext, GeneratedImage, ImageEditRequest, ImageGenerateRequest, ImageInputFile, ImageModelAdapter, ImageResult, ImageVariationRequest } from '../types';
import { isObject, isOptionalString, tokenCount, type JsonObject } from './shape';

/** Streaming image generation is not part of this adapter; these would turn the answer into SSE. */
const STREAM_ONLY_PARAMS = new Set(['stream', 'partial_images']);

const FORMAT_MEDIA_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif' };

export class OpenAICompatibleImageModel implements ImageModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
    const json: JsonObject = { ...passThroughParams(req.params), model: this.model, prompt: req.prompt, n: req.n };
    if (req.size !== undefined) json.size = req.size;
    const { body } = await upstreamJson(this.connection.providerId, this.connection.url('/images/generations'), this.connection.request(ctx, { json }));
    return this.result(body, req.params);
  }

  async doEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImageResult> {
    const form = this.form(req);
    form.append('prompt', req.prompt);
    // OpenAI takes one image as `image` and several as the array field `image[]`.
    const imageField = req.images.length > 1 ? 'image[]' : 'image';
    for (const image of req.images) appendFile(form, imageField, image);
    if (req.mask) appendFile(form, 'mask', req.mask);
    const { body } = await upstreamJson(this.connection.providerId, this.connection.url('/images/edits'), this.connection.request(ctx, { body: form }));
    return this.result(body, req.params);
  }

  async doVary(req: ImageVariationRequest, ctx: CallContext): Promise<ImageResult> {
    const form = this.form(req);
    appendFile(form, 'image', req.image);
    const { body } = await upstreamJson(this.connection.providerId, this.connection.url('/images/variations'), this.connection.request(ctx, { body: form }));
    return this.result(body, req.params);
  }

  /** The multipart fields every image upload route shares: model, n, size and the model's parameters. */
  private form(req: Omit<ImageVariationRequest, 'image'>): FormData {
    const form = new FormData();
    form.append('model', this.model);
    form.append('n', String(req.n));
    if (req.size !== undefined) form.append('size', req.size);
    for (const [name, value] of Object.entries(passThroughParams(req.params))) {
      if (name === 'model' || name === 'prompt' || name === 'n' || name === 'size' || value === undefined || value === null) continue;
      form.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    return form;
  }

  private result(body: unknown, params: Record<string, unknown>): ImageResult {
    const provider = this.connection.providerId;
    expectShape(provider, isObject(body) && Array.isArray(body.data) && body.data.length > 0, 'image response without data');
    const items = body.data as unknown[];
    expectShape(provider, items.every(isImageItem), 'image items carry neither b64_json nor url');
    const format = typeof body.output_format === 'string' ? body.output_format : typeof params.output_format === 'string' ? params.output_format : undefined;
    const images = (items as JsonObject[]).map((item) => toGeneratedImage(item, format));
    const usage = isObject(body.usage) ? { inputTokens: tokenCount(body.usage.input_tokens), outputTokens: tokenCount(body.usage.output_tokens), ...imageInput(body.usage) } : undefined;
    const reported = reportedSettings(body);
    return { images, ...(usage ? { usage } : {}), ...(reported ? { reported } : {}) };
  }
}

function imageInput(usage: JsonObject): { imageInputTokens?: number } {
  const details = isObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return typeof details.image_tokens === 'number' ? { imageInputTokens: tokenCount(details.image_tokens) } : {};
}

/** What GPT Image says it rendered (its `auto` quality and size resolved). */
function reportedSettings(body: JsonObject): ImageResult['reported'] | undefined {
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const reported = { size: text(body.size), quality: text(body.quality), background: text(body.background), outputFormat: text(body.output_format) };
  const set = Object.fromEntries(Object.entries(reported).filter(([, value]) => value !== undefined));
  return Object.keys(set).length > 0 ? set : undefined;
}

function appendFile(form: FormData, field: string, file: ImageInputFile): void {
  form.append(field, new Blob([file.data], { type: file.mediaType }), file.filename);
}

function passThroughParams(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([name, value]) => !STREAM_ONLY_PARAMS.has(name) && value !== undefined));
}

function isImageItem(item: unknown): boolean {
  if (!isObject(item) || !isOptionalString(item.revised_prompt)) return false;
  return (typeof item.b64_json === 'string' && item.b64_json.length > 0) || (typeof item.url === 'string' && item.url.length > 0);
}

function toGeneratedImage(item: JsonObject, format: string | undefined): GeneratedImage {
  const revisedPrompt = typeof item.revised_prompt === 'string' && item.revised_prompt ? { revisedPrompt: item.revised_prompt } : {};
  if (typeof item.b64_json === 'string' && item.b64_json) {
    return { data: Buffer.from(item.b64_json, 'base64'), mediaType: mediaTypeOf(format), ...revisedPrompt };
  }
  const url = item.url as string;
  return { url, mediaType: mediaTypeOf(format ?? extensionOf(url)), ...revisedPrompt };
}

function mediaTypeOf(format: string | undefined): string {
  return (format && FORMAT_MEDIA_TYPES[format.toLowerCase()]) || 'image/png';
}

function extensionOf(url: string): string | undefined {
  try {
    return /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1];
  } catch {
    return undefined;
  }
}
