/**
 * Luma AI's Dream Machine API. The base URL is the host (`https://api.lumalabs.ai`); the adapter adds the
 * `/dream-machine/v1` prefix itself, so one host entry serves the whole API.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { LumaVideoModel } from './video';

export function createLumaProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, { family: 'luma', auth: bearerAuth });
  return defineProvider(connection, {
    video: (upstreamModel) => new LumaVideoModel(connection, upstreamModel),
  });
}
