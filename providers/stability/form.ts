/**
 * Turns our image requests into Stability's multipart form fields. Stability sizes images by aspect
 * ratio from a fixed list, so a requested pixel size becomes the listed ratio nearest to it.
 */
import type { ImageGenerateRequest, ImageInputFile } from '../types';

export const ASPECT_RATIOS = ['21:9', '16:9', '3:2', '5:4', '1:1', '4:5', '2:3', '9:16', '9:21'] as const;

export const DEFAULT_OUTPUT_FORMAT = 'png';

export interface GenerateEndpoint {
  path: string;
  /** The SD3 endpoint serves several models, chosen by a `model` field. */
  modelField?: string;
}

export function generateEndpoint(upstreamModel: string): GenerateEndpoint {
  const model = upstreamModel.toLowerCase();
  if (model.startsWith('sd3')) {
    return { path: '/v2beta/stable-image/generate/sd3', ...(model === 'sd3' ? {} : { modelField: upstreamModel }) };
  }
  if (model === 'ultra' || model === 'stable-image-ultra') return { path: '/v2beta/stable-image/generate/ultra' };
  if (model === 'core' || model === 'stable-image-core') return { path: '/v2beta/stable-image/generate/core' };
  return { path: `/v2beta/stable-image/generate/${encodeURIComponent(upstreamModel)}` };
}

export const INPAINT_PATH = '/v2beta/stable-image/edit/inpaint';

/** Fields every request shares; the i-th of several images steps a fixed seed so they differ. */
export function commonFields(req: ImageGenerateRequest, index: number): Array<[string, string]> {
  const fields: Array<[string, string]> = [['prompt', req.prompt]];
  const negative = req.params.negative_prompt;
  if (typeof negative === 'string' && negative.trim() !== '') fields.push(['negative_prompt', negative]);
  const seed = req.params.seed;
  if (typeof seed === 'number') fields.push(['seed', String(seed + index)]);
  if (typeof req.params.style_preset === 'string') fields.push(['style_preset', req.params.style_preset]);
  fields.push(['output_format', outputFormat(req)]);
  return fields;
}

export function aspectRatioField(req: ImageGenerateRequest): Array<[string, string]> {
  if (typeof req.params.aspect_ratio === 'string') return [['aspect_ratio', req.params.aspect_ratio]];
  const match = /^(\d+)x(\d+)$/.exec(req.size ?? '');
  return match ? [['aspect_ratio', nearestAspectRatio(Number(match[1]), Number(match[2]))]] : [];
}

export function outputFormat(req: ImageGenerateRequest): string {
  return typeof req.params.output_format === 'string' ? req.params.output_format : DEFAULT_OUTPUT_FORMAT;
}

export function nearestAspectRatio(width: number, height: number): string {
  const target = Math.log(width / height);
  let best: string = ASPECT_RATIOS[0];
  for (const ratio of ASPECT_RATIOS) {
    const [w, h] = ratio.split(':').map(Number);
    const [bw, bh] = best.split(':').map(Number);
    if (Math.abs(Math.log(w / h) - target) < Math.abs(Math.log(bw / bh) - target)) best = ratio;
  }
  return best;
}

export function toForm(fields: Array<[string, string]>, files: Array<[string, ImageInputFile]> = []): FormData {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  for (const [name, file] of files) form.append(name, new Blob([new Uint8Array(file.data)], { type: file.mediaType }), file.filename);
  return form;
}
