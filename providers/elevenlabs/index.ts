/**
 * ElevenLabs (text to speech). `baseUrl` is the API root without a version, e.g. `https://api.elevenlabs.io`.
 */
import type { Provider, ProviderOptions } from '../types';
import { createElevenLabsSpeech } from './speech';

export function createElevenLabsProvider(options: ProviderOptions): Provider {
  return {
    id: options.id,
    family: 'elevenlabs',
    configured: Boolean(options.apiKey),
    speech: (upstreamModel) => createElevenLabsSpeech(options, upstreamModel),
  };
}
