/**
 * Google's Gemini API (generativelanguage.googleapis.com, `x-goog-api-key`) as a provider of chat
 * (Gemini), embeddings, images (Imagen and Gemini image models) and video (Veo).
 */
import { Connection, defineProvider, keyHeaderAuth } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { GoogleChatModel } from './chat';
import { GoogleEmbeddingModel } from './embedding';
import { GoogleGeminiImageModel, GoogleImagenModel } from './image';
import { GoogleVideoModel } from './video';

export function createGoogleProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'google',
    auth: keyHeaderAuth('x-goog-api-key'),
    // Base URLs are accepted with or without the API version suffix.
    versionSuffix: /\/v1(beta)?$/,
  });
  return defineProvider(connection, {
    chat: (upstreamModel) => new GoogleChatModel(connection, upstreamModel),
    embedding: (upstreamModel) => new GoogleEmbeddingModel(connection, upstreamModel),
    // The model id's prefix picks the route: Imagen models `:predict`, Gemini image models `:generateContent`.
    image: (upstreamModel) => /^(models\/)?imagen-/.test(upstreamModel)
      ? new GoogleImagenModel(connection, upstreamModel)
      : new GoogleGeminiImageModel(connection, upstreamModel),
    video: (upstreamModel) => new GoogleVideoModel(connection, upstreamModel),
  });
}
