/**
 * Stability AI's Stable Audio (`https://api.stability.ai`): music generation that answers with the audio
 * in one synchronous request.
 */
import type { Provider, ProviderOptions } from '../types';
import { StabilityAudioMusicAdapter, type StabilityAudioConnection } from './music';

export function createStabilityAudioProvider(options: ProviderOptions): Provider {
  const connection: StabilityAudioConnection = {
    providerId: options.id,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey || undefined,
    headers: { ...(options.headers ?? {}) },
    timeoutMs: options.timeoutMs,
  };
  return {
    id: options.id,
    family: 'stability-audio',
    configured: Boolean(connection.apiKey),
    music: (upstreamModel: string) => new StabilityAudioMusicAdapter(connection, upstreamModel),
  };
}
