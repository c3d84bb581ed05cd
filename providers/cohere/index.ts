/**
 * Cohere (embeddings, API v2). `baseUrl` is the API root without a version, e.g. `https://api.cohere.com`.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { CohereEmbeddingModel } from './embedding';

export function createCohereProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, { family: 'cohere', auth: bearerAuth });
  return defineProvider(connection, {
    embedding: (upstreamModel) => new CohereEmbeddingModel(connection, upstreamModel),
  });
}
