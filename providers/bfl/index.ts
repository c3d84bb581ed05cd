/**
 * Black Forest Labs (FLUX image models). `baseUrl` is the API root without a version, e.g.
 * `https://api.bfl.ai`; the adapter's upstream model is the endpoint name (`flux-pro-1.1`, `flux-dev`, ...).
 */
import type { Provider, ProviderOptions } from '../types';
import { createBflImage } from './image';

export function createBflProvider(options: ProviderOptions): Provider {
  return {
    id: options.id,
    family: 'bfl',
    configured: Boolean(options.apiKey),
    image: (upstreamModel) => createBflImage(options, upstreamModel),
  };
}
