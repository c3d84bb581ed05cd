/**
 * Builds the body of a FLUX generation task from our image request. Most FLUX endpoints take a pixel
 * `width`/`height`; the Ultra and Kontext ones take an `aspect_ratio` instead, so for those a requested
 * size is reduced to its ratio.
 */
import type { ImageGenerateRequest } from '../types';

/** Request params passed through under the same name, when the catalog let the caller send them. */
const PASSED_THROUGH = ['seed', 'output_format', 'safety_tolerance', 'prompt_upsampling', 'raw', 'guidance', 'steps'] as const;

export function takesAspectRatio(model: string): boolean {
  return /ultra|kontext/i.test(model);
}

export function buildTaskBody(model: string, req: ImageGenerateRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { prompt: req.prompt };
  for (const name of PASSED_THROUGH) {
    if (req.params[name] !== undefined && req.params[name] !== null) body[name] = req.params[name];
  }
  const size = parseSize(req.size);
  if (typeof req.params.aspect_ratio === 'string') body.aspect_ratio = req.params.aspect_ratio;
  else if (size && takesAspectRatio(model)) body.aspect_ratio = ratioOf(size.width, size.height);
  else if (size) Object.assign(body, size);
  return body;
}

/** The body for the i-th of several tasks: a fixed seed is stepped so the images differ but stay reproducible. */
export function taskBodyFor(body: Record<string, unknown>, index: number): Record<string, unknown> {
  return typeof body.seed === 'number' && index > 0 ? { ...body, seed: body.seed + index } : body;
}

function parseSize(size: string | undefined): { width: number; height: number } | null {
  const match = /^(\d+)x(\d+)$/.exec(size ?? '');
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}

function ratioOf(width: number, height: number): string {
  const divisor = gcd(width, height);
  return `${width / divisor}:${height / divisor}`;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
