/**
 * Stability AI (Stable Image generation and editing, API v2beta). `baseUrl` is the API root, e.g.
 * `https://api.stability.ai`; the upstream model is `core`, `ultra`, or an SD3 model id (`sd3.5-large`, ...).
 */
import type { Provider, ProviderOptions } from '../types';
import { createStabilityImage } from './image';

export function createStabilityProvider(options: ProviderOptions): Provider {
  return {
    id: options.id,
    family: 'stability',
    configured: Boolean(options.apiKey),
    image: (upstreamModel) => createStabilityImage(options, upstreamModel),
  };
}
