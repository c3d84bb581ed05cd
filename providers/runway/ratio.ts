/**
 * Runway names an output's shape by its pixel size (`ratio: "1280:720"`), where the gateway's public API
 * speaks of an aspect ratio plus a resolution tier. This module is the one translation between the two.
 */
import { InvalidRequestError } from '../../core/errors';

const DEFAULT_ASPECT_RATIO = '16:9';
const DEFAULT_TIER = '720p';

/** Output sizes Runway documents per resolution tier (gen4, gen4.5, veo3 families). */
const SIZES_BY_TIER: Record<string, Record<string, string>> = {
  '720p': {
    '16:9': '1280:720',
    '9:16': '720:1280',
    '1:1': '960:960',
    '4:3': '1104:832',
    '3:4': '832:1104',
    '21:9': '1584:672',
  },
  '1080p': {
    '16:9': '1920:1080',
    '9:16': '1080:1920',
  },
};

/** gen3a_turbo renders 5:3 frames; its "landscape" and "portrait" sizes differ from newer models. */
const GEN3A_SIZES: Record<string, string> = {
  '16:9': '1280:768',
  '9:16': '768:1280',
};

/**
 * Picks the `ratio` field for a task. An explicit pixel size (`1280x720` or `1280:720`) passes through;
 * otherwise the aspect ratio (default 16:9) is looked up in the resolution tier (default 720p).
 */
export function runwayRatio(model: string, resolution: string | undefined, aspectRatio: string | undefined): string {
  const pixels = resolution?.trim().match(/^(\d+)\s*[x:]\s*(\d+)$/i);
  if (pixels) return `${pixels[1]}:${pixels[2]}`;

  const aspect = aspectRatio?.trim() || DEFAULT_ASPECT_RATIO;
  if (model.startsWith('gen3a')) {
    const size = GEN3A_SIZES[aspect];
    if (!size) throw unsupported('aspect_ratio', aspect, model);
    return size;
  }
  const tier = resolution?.trim().toLowerCase() || DEFAULT_TIER;
  const sizes = SIZES_BY_TIER[tier];
  if (!sizes) throw unsupported('resolution', tier, model);
  const size = sizes[aspect];
  if (!size) throw unsupported('aspect_ratio', aspect, model, tier);
  return size;
}

function unsupported(param: 'resolution' | 'aspect_ratio', value: string, model: string, tier?: string): InvalidRequestError {
  const at = tier ? ` at ${tier}` : '';
  return new InvalidRequestError(`${param} ${value} is not available for ${model}${at}`, { param, code: 'unsupported_value' });
}
