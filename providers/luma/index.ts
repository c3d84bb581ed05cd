/**
 * Luma AI's Dream Machine API. The base URL is the host (`https://api.lumalabs.ai`); the adapter adds the
 * `/dream-machine/v1` prefix itself, so one host entry serves the whole API.
 */
import type { Provider, ProviderOptions } from '../types';
import { LumaVideoAdapter, type LumaConnection } from './video';

export function createLumaProvider(options: ProviderOptions): Provider {
  const connection: LumaConnection = {
    providerId: options.id,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey || undefined,
    headers: { ...(options.headers ?? {}) },
    timeoutMs: options.timeoutMs,
  };
  return {
    id: options.id,
    family: 'luma',
    configured: Boolean(connection.apiKey),
    video: (upstreamModel: string) => new LumaVideoAdapter(connection, upstreamModel),
  };
}
