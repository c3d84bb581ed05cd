/**
 * Anthropic's Messages API (`POST /v1/messages`) as a chat provider. Authenticates with `x-api-key` and
 * pins `anthropic-version`; hosts that need more (beta flags) pass them as extra headers.
 */
import { Connection, defineProvider, keyHeaderAuth } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { AnthropicBatches } from './batches';
import { AnthropicChatModel } from './chat';

export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` is required by the API; used when the caller sets none. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicProviderOptions extends ProviderOptions {
  defaultMaxTokens?: number;
  /** The host serves Anthropic's Message Batches API (providers/anthropic/batches.ts). */
  nativeBatches?: boolean;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'anthropic',
    auth: keyHeaderAuth('x-api-key'),
    defaultHeaders: { 'anthropic-version': ANTHROPIC_VERSION },
    // Base URLs are accepted with or without the `/v1` suffix.
    versionSuffix: /\/v1$/,
  });
  const defaultMaxTokens = options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  return defineProvider(connection, {
    chat: (upstreamModel) => new AnthropicChatModel(connection, upstreamModel, { defaultMaxTokens }),
    ...(options.nativeBatches ? { batches: new AnthropicBatches(connection) } : {}),
  });
}
