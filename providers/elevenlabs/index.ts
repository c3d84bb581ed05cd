/**
 * ElevenLabs (text to speech). `baseUrl` is the API root without a version, e.g. `https://api.elevenlabs.io`.
 */
import { Connection, defineProvider, keyHeaderAuth } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { ElevenLabsSpeechModel } from './speech';

export function createElevenLabsProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, { family: 'elevenlabs', auth: keyHeaderAuth('xi-api-key') });
  return defineProvider(connection, {
    speech: (upstreamModel) => new ElevenLabsSpeechModel(connection, upstreamModel),
  });
}
