/**
 * Black Forest Labs (FLUX image models). `baseUrl` is the API root without a version, e.g.
 * `https://api.bfl.ai`; the adapter's upstream model is the endpoint name (`flux-pro-1.1`, `flux-dev`, ...).
 */
import { Connection, defineProvider, keyHeaderAuth } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { BflImageModel } from './image';

export function createBflProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'bfl',
    auth: keyHeaderAuth('x-key'),
    // Generations take seconds to tens of seconds; the shared 60 s default leaves too little room.
    defaultTimeoutMs: 120_000,
  });
  return defineProvider(connection, {
    image: (upstreamModel) => new BflImageModel(connection, upstreamModel),
  });
}
