/**
 * The `openai-compatible` wire family: OpenAI's own API and every host that speaks its format (Groq,
 * Together, Fireworks, DeepSeek, Mistral, xAI, ...). Nothing here is specific to one host; hosts differ
 * only by their options (base URL, key, headers, and the switches in OpenAICompatibleOptions).
 */
import type { Provider } from '../types';
import { OpenAICompatibleChatModel } from './chat';
import { OpenAICompatibleClient, type OpenAICompatibleOptions } from './client';
import { OpenAICompatibleEmbeddingModel } from './embedding';
import { OpenAICompatibleImageModel } from './image';
import { OpenAICompatibleSpeechModel } from './speech';
import { OpenAICompatibleTranscriptionModel } from './transcription';

export type { ModelSwitch, OpenAICompatibleOptions } from './client';

export const OPENAI_COMPATIBLE_FAMILY = 'openai-compatible';

export function createOpenAICompatibleProvider(options: OpenAICompatibleOptions): Provider {
  const client = new OpenAICompatibleClient(options);
  return {
    id: options.id,
    family: OPENAI_COMPATIBLE_FAMILY,
    configured: client.configured,
    chat: (upstreamModel) => new OpenAICompatibleChatModel(client, upstreamModel),
    embedding: (upstreamModel) => new OpenAICompatibleEmbeddingModel(client, upstreamModel),
    image: (upstreamModel) => new OpenAICompatibleImageModel(client, upstreamModel),
    speech: (upstreamModel) => new OpenAICompatibleSpeechModel(client, upstreamModel),
    transcription: (upstreamModel) => new OpenAICompatibleTranscriptionModel(client, upstreamModel),
  };
}
