/**
 * Image generation. Imagen models answer `:predict`; Gemini image models (`gemini-*-image`) answer
 * `:generateContent` with image output, and also edit images given as input. The model id's prefix picks
 * the route (see index.ts).
 */
import { InvalidRequestError, UpstreamError } from '../../core/errors';
import type { Connection } from '../connection';
import { expectShape, upstreamJson, type UpstreamRequest } from '../http';
import type { CallContext, GeneratedImage, ImageEditRequest, ImageGenerateRequest, ImageModelAdapter, ImageResult, TokenUsage } from '../types';
import { toTokenUsage } from './chat-response';
import { modelUrl } from './paths';
import type { GeminiGenerateContentRequest, GeminiGenerateContentResponse, GeminiPart } from './wire';

const IMAGEN_ASPECT_RATIOS = ['1:1', '3:4', '4:3', '9:16', '16:9'];
const GEMINI_ASPECT_RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];
const OUTPUT_MEDIA_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', jpg: 'image/jpeg', webp: 'image/webp' };

interface ImagenResponse {
  predictions?: Array<{ bytesBase64Encoded?: string; mimeType?: string; prompt?: string; raiFilteredReason?: string }>;
}

/** Imagen models: `:predict`, generation only. */
export class GoogleImagenModel implements ImageModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  async doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
    const { providerId: provider } = this.connection;
    const request = this.connection.request(ctx);
    const params = req.params;
    const parameters: Record<string, unknown> = { sampleCount: req.n };
    const aspectRatio = aspectRatioFor(req, IMAGEN_ASPECT_RATIOS);
    if (aspectRatio) parameters.aspectRatio = aspectRatio;
    if (params.person_generation !== undefined) parameters.personGeneration = params.person_generation;
    if (params.negative_prompt !== undefined) parameters.negativePrompt = params.negative_prompt;
    if (params.seed !== undefined) parameters.seed = params.seed;
    if (params.image_size !== undefined) parameters.imageSize = params.image_size;
    const outputOptions = imagenOutputOptions(params);
    if (outputOptions) parameters.outputOptions = outputOptions;

    const answer = await upstreamJson<ImagenResponse>(provider, modelUrl(this.connection, this.model, 'predict'), {
      ...request, json: { instances: [{ prompt: req.prompt }], parameters },
    });
    const body = answer.body;
    expectShape(provider, !!body && typeof body === 'object', 'not an object');
    const predictions = body.predictions ?? [];
    expectShape(provider, Array.isArray(predictions), 'predictions are not a list');
    const images: GeneratedImage[] = [];
    const filtered: string[] = [];
    for (const prediction of predictions) {
      if (typeof prediction?.bytesBase64Encoded !== 'string') {
        if (prediction?.raiFilteredReason) filtered.push(prediction.raiFilteredReason);
        continue;
      }
      const image: GeneratedImage = { data: Buffer.from(prediction.bytesBase64Encoded, 'base64'), mediaType: prediction.mimeType ?? 'image/png' };
      if (prediction.prompt) image.revisedPrompt = prediction.prompt;
      images.push(image);
    }
    // Imagen drops filtered images from `predictions`; with none left there is nothing to return.
    if (images.length === 0) throw contentFiltered(provider, filtered[0]);
    return { images };
  }
}

function imagenOutputOptions(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const options: Record<string, unknown> = {};
  if (typeof params.output_format === 'string' && OUTPUT_MEDIA_TYPES[params.output_format]) options.mimeType = OUTPUT_MEDIA_TYPES[params.output_format];
  if (typeof params.output_compression === 'number') options.compressionQuality = params.output_compression;
  return Object.keys(options).length > 0 ? options : undefined;
}

/** Gemini image models (`gemini-*-image`): `:generateContent` with image output; they also edit given images. */
export class GoogleGeminiImageModel implements ImageModelAdapter {
  constructor(private readonly connection: Connection, private readonly model: string) {}

  doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
    return this.generate(req, [], ctx);
  }

  async doEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImageResult> {
    if (req.mask) throw new InvalidRequestError('This model edits from the prompt alone and takes no mask', { param: 'mask', code: 'unsupported_parameter' });
    const inputs = req.images.map((image): GeminiPart => ({ inlineData: { mimeType: image.mediaType, data: image.data.toString('base64') } }));
    return this.generate(req, inputs, ctx);
  }

  /** These models make one image per call, so `n` images take `n` calls, run side by side. */
  private async generate(req: ImageGenerateRequest, inputs: GeminiPart[], ctx: CallContext): Promise<ImageResult> {
    const request = this.connection.request(ctx);
    const results = await Promise.all(Array.from({ length: Math.max(1, req.n) }, () => this.generateOne(req, inputs, request)));
    const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
    for (const result of results) {
      usage.inputTokens += result.usage.inputTokens;
      usage.outputTokens += result.usage.outputTokens;
    }
    return { images: results.flatMap((result) => result.images), usage };
  }

  private async generateOne(req: ImageGenerateRequest, inputs: GeminiPart[], request: UpstreamRequest) {
    const imageConfig: { aspectRatio?: string; imageSize?: string } = {};
    const aspectRatio = aspectRatioFor(req, GEMINI_ASPECT_RATIOS);
    if (aspectRatio) imageConfig.aspectRatio = aspectRatio;
    if (typeof req.params.image_size === 'string') imageConfig.imageSize = req.params.image_size;
    const body: GeminiGenerateContentRequest = {
      contents: [{ role: 'user', parts: [{ text: req.prompt }, ...inputs] }],
      generationConfig: { responseModalities: ['IMAGE'], ...(Object.keys(imageConfig).length > 0 ? { imageConfig } : {}) },
    };
    if (typeof req.params.seed === 'number') body.generationConfig!.seed = req.params.seed;
    const answer = await upstreamJson<GeminiGenerateContentResponse>(this.connection.providerId, modelUrl(this.connection, this.model, 'generateContent'), {
      ...request, json: body,
    });
    return readGeneratedImages(this.connection.providerId, answer.body);
  }
}

function readGeneratedImages(provider: string, body: GeminiGenerateContentResponse): { images: GeneratedImage[]; usage: TokenUsage } {
  expectShape(provider, !!body && typeof body === 'object', 'not an object');
  const candidate = body.candidates?.[0];
  const images: GeneratedImage[] = [];
  const texts: string[] = [];
  for (const part of candidate?.content?.parts ?? []) {
    if (part.inlineData?.data && !part.thought) images.push({ data: Buffer.from(part.inlineData.data, 'base64'), mediaType: part.inlineData.mimeType ?? 'image/png' });
    else if (typeof part.text === 'string' && !part.thought) texts.push(part.text);
  }
  if (images.length === 0) {
    const reason = body.promptFeedback?.blockReason ?? candidate?.finishReason;
    if (reason && reason !== 'STOP') throw contentFiltered(provider, reason);
    throw new UpstreamError(`${provider} returned no image${texts.length > 0 ? `: ${texts.join(' ').slice(0, 200)}` : ''}`, { kind: 'bad_response', provider });
  }
  return { images, usage: toTokenUsage(body.usageMetadata) };
}

/** A refusal is the caller's prompt, not an outage: not retried, not sent to a fallback. */
function contentFiltered(provider: string, reason: string | undefined): UpstreamError {
  return new UpstreamError(`${provider} declined to generate this image${reason ? ` (${reason})` : ''}; try rephrasing the prompt`, {
    kind: 'caller_error', provider, code: 'content_filtered',
  });
}

/** `aspect_ratio` when given, else the supported ratio closest to `size` (`WxH`). */
function aspectRatioFor(req: ImageGenerateRequest, supported: string[]): string | undefined {
  if (typeof req.params.aspect_ratio === 'string') return req.params.aspect_ratio;
  const match = /^(\d+)x(\d+)$/.exec(req.size ?? '');
  if (!match) return undefined;
  const target = Math.log(Number(match[1]) / Number(match[2]));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const ratio of supported) {
    const [w, h] = ratio.split(':').map(Number);
    const distance = Math.abs(Math.log(w / h) - target);
    if (distance < bestDistance) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best;
}
