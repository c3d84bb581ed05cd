/**
 * Stability AI's Stable Audio (`https://api.stability.ai`): music generation that answers with the audio
 * in one synchronous request.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { StabilityAudioMusicModel } from './music';

export function createStabilityAudioProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'stability-audio',
    auth: bearerAuth,
    // A track takes tens of seconds to render, longer for the 190 s maximum; the shared 60 s default is short.
    defaultTimeoutMs: 180_000,
  });
  return defineProvider(connection, {
    music: (upstreamModel) => new StabilityAudioMusicModel(connection, upstreamModel),
  });
}
