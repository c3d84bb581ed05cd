/**
 * Runway's developer API (`https://api.dev.runwayml.com`): video generation as polled tasks.
 * Every request carries `X-Runway-Version`; Runway refuses requests without it, and the pin keeps the
 * wire format this adapter was written against. An operator may move the pin through `options.headers`.
 */
import type { Provider, ProviderOptions } from '../types';
import { RunwayVideoAdapter, type RunwayConnection } from './video';

export const RUNWAY_API_VERSION = '2024-11-06';

export function createRunwayProvider(options: ProviderOptions): Provider {
  const connection: RunwayConnection = {
    providerId: options.id,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey || undefined,
    headers: { 'x-runway-version': RUNWAY_API_VERSION, ...lowerCaseKeys(options.headers ?? {}) },
    timeoutMs: options.timeoutMs,
  };
  return {
    id: options.id,
    family: 'runway',
    configured: Boolean(connection.apiKey),
    video: (upstreamModel: string) => new RunwayVideoAdapter(connection, upstreamModel),
  };
}

/** So an operator's `X-Runway-Version` replaces the default pin instead of being sent beside it. */
function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
