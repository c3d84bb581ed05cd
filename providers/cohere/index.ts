/**
 * Cohere (embeddings, API v2). `baseUrl` is the API root without a version, e.g. `https://api.cohere.com`.
 */
import type { Provider, ProviderOptions } from '../types';
import { createCohereEmbedding } from './embedding';

export function createCohereProvider(options: ProviderOptions): Provider {
  return {
    id: options.id,
    family: 'cohere',
    configured: Boolean(options.apiKey),
    embedding: (upstreamModel) => createCohereEmbedding(options, upstreamModel),
  };
}
