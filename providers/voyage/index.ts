/**
 * Voyage AI (embeddings). `baseUrl` is the API root without a version, e.g. `https://api.voyageai.com`.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { VoyageEmbeddingModel } from './embedding';

export function createVoyageProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, { family: 'voyage', auth: bearerAuth });
  return defineProvider(connection, {
    embedding: (upstreamModel) => new VoyageEmbeddingModel(connection, upstreamModel),
  });
}
