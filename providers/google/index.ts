/**
 * Google's Gemini API (generativelanguage.googleapis.com, `x-goog-api-key`) as a provider of chat
 * (Gemini), embeddings, images (Imagen and Gemini image models) and video (Veo).
 */
import type { Provider, ProviderOptions } from '../types';
import { createGoogleChat } from './chat';
import { createGoogleEmbedding } from './embedding';
import { GoogleEndpoint } from './endpoint';
import { createGoogleImage } from './image';
import { createGoogleVideo } from './video';

export function createGoogleProvider(options: ProviderOptions): Provider {
  const endpoint = new GoogleEndpoint(options);
  return {
    id: options.id,
    family: 'google',
    configured: endpoint.configured,
    chat: (upstreamModel) => createGoogleChat(endpoint, upstreamModel),
    embedding: (upstreamModel) => createGoogleEmbedding(endpoint, upstreamModel),
    image: (upstreamModel) => createGoogleImage(endpoint, upstreamModel),
    video: (upstreamModel) => createGoogleVideo(endpoint, upstreamModel),
  };
}
