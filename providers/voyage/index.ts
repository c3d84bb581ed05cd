/**
 * Voyage AI (embeddings). `baseUrl` is the API root without a version, e.g. `https://api.voyageai.com`.
 */
import type { Provider, ProviderOptions } from '../types';
import { createVoyageEmbedding } from './embedding';

export function createVoyageProvider(options: ProviderOptions): Provider {
  return {
    id: options.id,
    family: 'voyage',
    configured: Boolean(options.apiKey),
    embedding: (upstreamModel) => createVoyageEmbedding(options, upstreamModel),
  };
}
