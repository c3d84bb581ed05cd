/**
 * Runway's developer API (`https://api.dev.runwayml.com`): video generation as polled tasks.
 * Every request carries `X-Runway-Version`; Runway refuses requests without it, and the pin keeps the
 * wire format this adapter was written against. An operator may move the pin through `options.headers`.
 */
import { bearerAuth, Connection, defineProvider } from '../connection';
import type { Provider, ProviderOptions } from '../types';
import { RunwayVideoModel } from './video';

export const RUNWAY_API_VERSION = '2024-11-06';

export function createRunwayProvider(options: ProviderOptions): Provider {
  const connection = new Connection(options, {
    family: 'runway',
    auth: bearerAuth,
    defaultHeaders: { 'x-runway-version': RUNWAY_API_VERSION },
    // So an operator's `X-Runway-Version` replaces the default pin instead of being sent beside it.
    lowerCaseHeaderNames: true,
  });
  return defineProvider(connection, {
    video: (upstreamModel) => new RunwayVideoModel(connection, upstreamModel),
  });
}
