/** Simulated image generation, editing and variations: real PNG/JPEG/WebP bytes at the requested size. */
import { createHash } from 'node:crypto';
import type { CallContext, ImageEditRequest, ImageGenerateRequest, ImageInputFile, ImageModelAdapter, ImageResult, ImageVariationRequest } from '../providers/types';
import { activeFailure, enact, malformedAnswer, parseModelVariant, rejectRequest } from './behaviour';
import { editImage, generateImage, IMAGE_MEDIA_TYPES, ImageFormat } from './media/image';
import { countTokens, seedFrom } from './seed';
import type { SimulatedSettings } from './settings';

const DEFAULT_SIZE = { width: 1024, height: 1024 };
const MAX_SIDE = 4096;
const MAX_IMAGES = 10;

export function createSimulatedImage(upstreamModel: string, settings: SimulatedSettings): ImageModelAdapter {
  const variant = parseModelVariant(upstreamModel);
  const { provider } = settings;
  const reject = (message: string) => rejectRequest(provider, upstreamModel, message);

  const common = (req: ImageGenerateRequest) => {
    if (!req.prompt?.trim()) throw reject("'prompt' must not be empty.");
    return output(req);
  };
  const output = (req: Omit<ImageVariationRequest, 'image'>) => {
    const n = req.n ?? 1;
    if (!Number.isInteger(n) || n < 1 || n > MAX_IMAGES) throw reject(`'n' must be between 1 and ${MAX_IMAGES}.`);
    const format = parseFormat(req.params.output_format, reject);
    const transparent = req.params.background === 'transparent';
    if (transparent && format === 'jpeg') throw reject('Transparent background is not supported for the jpeg output format.');
    const compression = typeof req.params.output_compression === 'number' ? req.params.output_compression : undefined;
    if (compression !== undefined && (compression < 0 || compression > 100)) throw reject("'output_compression' must be between 0 and 100.");
    return { n, format, transparent, compression };
  };

  return {
    async doGenerate(req: ImageGenerateRequest, ctx: CallContext): Promise<ImageResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      const { n, format, transparent, compression } = common(req);
      const size = parseSize(req.size, reject);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const images = [];
      for (let index = 0; index < n; index++) {
        const seed = seedFrom('image', req.prompt, req.params.seed ?? null, index);
        const data = await generateImage({ ...size, seed, transparent, format, compression });
        images.push({ data, mediaType: IMAGE_MEDIA_TYPES[format], revisedPrompt: revise(req.prompt) });
      }
      return { images, usage: usage(req.prompt, n, size.width, size.height) };
    },

    async doEdit(req: ImageEditRequest, ctx: CallContext): Promise<ImageResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      const { n, format, compression } = common(req);
      const source = req.images[0];
      if (!source) throw reject("'image' is required.");
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const { images, last } = await tinted(source, req.mask, n, (index) => seedFrom('edit', req.prompt, req.params.seed ?? null, index), format, compression);
      return { images: images.map((image) => ({ ...image, revisedPrompt: revise(req.prompt) })), usage: usage(req.prompt, n, last.width, last.height) };
    },

    /** Variations: the whole input image tinted with a seeded colour per image (no mask, no prompt), at `size`. */
    async doVary(req: ImageVariationRequest, ctx: CallContext): Promise<ImageResult> {
      const outcome = await enact(provider, activeFailure(variant, ctx), ctx, settings, upstreamModel);
      const { n, format, compression } = output(req);
      if (outcome === 'malformed') throw malformedAnswer(provider);
      const size = req.size === undefined || req.size === 'auto' ? undefined : parseSize(req.size, reject);
      const seedOf = (index: number) => seedFrom('variation', createHash('sha256').update(req.image.data).digest('hex'), req.params.seed ?? null, index);
      const { images, last } = await tinted(req.image, undefined, n, seedOf, format, compression, size);
      return { images, usage: usage('', n, last.width, last.height) };
    },
  };

  async function tinted(
    source: ImageInputFile, mask: ImageInputFile | undefined, n: number, seedOf: (index: number) => number, format: ImageFormat, compression: number | undefined,
    size?: { width: number; height: number },
  ) {
    const images = [];
    let last = { width: 0, height: 0 };
    for (let index = 0; index < n; index++) {
      let edited;
      try {
        edited = await editImage({ image: source.data, mask: mask?.data, seed: seedOf(index), format, compression, size });
      } catch {
        throw reject(`Invalid image file '${source.filename}': it could not be decoded as PNG, JPEG, WebP or GIF.`);
      }
      last = edited;
      images.push({ data: edited.data, mediaType: IMAGE_MEDIA_TYPES[format] });
    }
    return { images, last };
  }
}

function parseSize(size: string | undefined, reject: (m: string) => Error): { width: number; height: number } {
  if (size === undefined || size === 'auto') return DEFAULT_SIZE;
  const match = /^(\d+)x(\d+)$/.exec(size);
  const width = match ? Number(match[1]) : NaN;
  const height = match ? Number(match[2]) : NaN;
  if (!(width >= 1 && height >= 1 && width <= MAX_SIDE && height <= MAX_SIDE)) throw reject(`Invalid size '${size}': expected WIDTHxHEIGHT up to ${MAX_SIDE}, or 'auto'.`);
  return { width, height };
}

function parseFormat(value: unknown, reject: (m: string) => Error): ImageFormat {
  if (value === undefined || value === null || value === 'png') return 'png';
  if (value === 'jpeg' || value === 'jpg') return 'jpeg';
  if (value === 'webp') return 'webp';
  throw reject(`Invalid output_format '${String(value)}': use png, jpeg or webp.`);
}

function revise(prompt: string): string {
  return `${prompt.trim()} (simulated rendering: an abstract composition of gradients and discs)`;
}

/** Token-style usage as image models report it: the prompt in, about one token per 64x64 tile out. */
function usage(prompt: string, n: number, width: number, height: number) {
  return { inputTokens: countTokens(prompt), outputTokens: n * Math.ceil((width * height) / 4096) };
}
