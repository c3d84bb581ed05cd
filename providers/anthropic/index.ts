/**
 * Anthropic's Messages API (`POST /v1/messages`) as a chat provider. Authenticates with `x-api-key` and
 * pins `anthropic-version`; hosts that need more (beta flags) pass them as extra headers.
 */
import { UpstreamError } from '../../core/errors';
import type { Provider, ProviderOptions } from '../types';
import { createAnthropicChat, type AnthropicEndpoint } from './chat';

export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` is required by the API; used when the caller sets none. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicProviderOptions extends ProviderOptions {
  defaultMaxTokens?: number;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const { id, apiKey } = options;
  const endpoint: AnthropicEndpoint = {
    provider: id,
    url: joinUrl(options.baseUrl, '/v1/messages'),
    headers() {
      if (!apiKey) throw new UpstreamError(`${id} is not configured (no API key)`, { kind: 'not_configured', provider: id });
      return { 'anthropic-version': ANTHROPIC_VERSION, ...(options.headers ?? {}), 'x-api-key': apiKey, 'content-type': 'application/json' };
    },
    timeoutMs: (ctx) => ctx.timeoutMs ?? options.timeoutMs,
    defaultMaxTokens: options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
  };
  return {
    id,
    family: 'anthropic',
    configured: Boolean(apiKey),
    chat: (upstreamModel) => createAnthropicChat(endpoint, upstreamModel),
  };
}

/** Accepts base URLs given with or without the `/v1` suffix. */
function joinUrl(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return base.endsWith('/v1') && path.startsWith('/v1/') ? base + path.slice(3) : base + path;
}
