/**
 * Cohere (embeddings on API v2; chat through its OpenAI-compatible endpoint). `baseUrl` is the API root
 * without a version, e.g. `https://api.cohere.com`.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { CohereChatModel } from './chat';
import { CohereEmbeddingModel } from './embedding';

export function createCohereProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, { family: 'cohere', auth: bearerAuth });
  return defineProvider(connection, {
    chat: (upstreamModel) => new CohereChatModel(connection, upstreamModel),
    embedding: (upstreamModel) => new CohereEmbeddingModel(connection, upstreamModel),
  });
}
