/**
 * Stability AI (Stable Image generation and editing, API v2beta). `baseUrl` is the API root, e.g.
 * `https://api.stability.ai`; the upstream model is `core`, `ultra`, or an SD3 model id (`sd3.5-large`, ...).
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { StabilityImageModel } from './image';

export function createStabilityProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'stability',
    auth: bearerAuth,
    // Ultra renders take up to about a minute; the shared 60 s default is tight.
    defaultTimeoutMs: 90_000,
  });
  return defineProvider(connection, {
    image: (upstreamModel) => new StabilityImageModel(connection, upstreamModel),
  });
}
