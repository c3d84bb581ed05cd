/** The endpoint handlers the request workflow can run, by endpoint. */
import { chatHandler } from './chat';
import { embeddingsHandler } from './embeddings';
import type { Endpoint, EndpointHandler } from './types';

const HANDLERS: Partial<Record<Endpoint, EndpointHandler>> = {
  'chat.completions': chatHandler,
  embeddings: embeddingsHandler,
};

export function handlerFor(endpoint: Endpoint): EndpointHandler {
  const handler = HANDLERS[endpoint];
  if (!handler) throw new Error(`no handler for endpoint ${endpoint}`);
  return handler;
}

export function registerHandler(handler: EndpointHandler): void {
  HANDLERS[handler.endpoint] = handler;
}
