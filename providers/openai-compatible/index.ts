/**
 * The `openai-compatible` wire family: OpenAI's own API and every host that speaks its format (Groq,
 * Together, Fireworks, DeepSeek, Mistral, xAI, ...). Nothing here is specific to one host; hosts differ
 * only by their options (base URL, key, headers, and the switches in OpenAICompatibleOptions).
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { OpenAIBatches } from './batches';
import { OpenAICompatibleChatModel } from './chat';
import { OpenAICompatibleEmbeddingModel } from './embedding';
import { OpenAICompatibleImageModel } from './image';
import { OpenAICompatibleModerationModel } from './moderation';
import { OpenAICompatibleSpeechModel } from './speech';
import { OpenAICompatibleTranscriptionModel } from './transcription';

export const OPENAI_COMPATIBLE_FAMILY = 'openai-compatible';

/** A test on the upstream model id, or one answer for every model of the host. */
export type ModelSwitch = boolean | ((upstreamModel: string) => boolean);

export interface OpenAICompatibleOptions extends ProviderOptions {
  /**
   * Send `max_completion_tokens` instead of `max_tokens` (OpenAI's reasoning models refuse the latter;
   * many other hosts only know the latter).
   */
  useMaxCompletionTokens?: ModelSwitch;
  /**
   * Ask for `response_format=json` instead of `verbose_json` on transcriptions, for models that refuse
   * verbose output (durations then come from `usage.seconds` when the host reports it).
   */
  plainJsonTranscription?: ModelSwitch;
  /** The host answers `n` chat choices in one call (otherwise the gateway makes one call per choice). */
  nativeChoices?: ModelSwitch;
  /** The chat completions path, for hosts that serve the format under another one. */
  chatPath?: string;
  /** The host serves OpenAI's Batch API (`/files` and `/batches`): providers/openai-compatible/batches.ts. */
  nativeBatches?: boolean;
}

export function createOpenAICompatibleProvider(options: OpenAICompatibleOptions): Provider {
  // Host-specific headers (organization ids, API version pins) may also replace the default auth.
  const connection = new Connection(options, { family: OPENAI_COMPATIBLE_FAMILY, auth: bearerAuth, authPlacement: 'before-host', lowerCaseHeaderNames: true });
  const chat = (upstreamModel: string) => new OpenAICompatibleChatModel(connection, upstreamModel, {
    maxCompletionTokens: appliesTo(options.useMaxCompletionTokens, upstreamModel),
    nativeChoices: appliesTo(options.nativeChoices, upstreamModel),
    ...(options.chatPath ? { path: options.chatPath } : {}),
  });
  return defineProvider(connection, {
    chat,
    ...(options.nativeBatches ? { batches: new OpenAIBatches(connection, chat) } : {}),
    embedding: (upstreamModel) => new OpenAICompatibleEmbeddingModel(connection, upstreamModel),
    image: (upstreamModel) => new OpenAICompatibleImageModel(connection, upstreamModel),
    speech: (upstreamModel) => new OpenAICompatibleSpeechModel(connection, upstreamModel),
    transcription: (upstreamModel) => new OpenAICompatibleTranscriptionModel(connection, upstreamModel, {
      plainJson: appliesTo(options.plainJsonTranscription, upstreamModel),
    }),
    moderation: (upstreamModel) => new OpenAICompatibleModerationModel(connection, upstreamModel),
  });
}

function appliesTo(flag: ModelSwitch | undefined, upstreamModel: string): boolean {
  return typeof flag === 'function' ? flag(upstreamModel) : flag === true;
}
