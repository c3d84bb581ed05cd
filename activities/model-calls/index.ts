/** The endpoint handlers the request workflow can run, by endpoint. */
import { chatHandler } from './chat';
import { embeddingsHandler } from './embeddings';
import { imageEditsHandler, imageGenerationsHandler } from './images';
import { musicHandler } from './music';
import { speechHandler } from './speech';
import { transcriptionHandler } from './transcription';
import type { Endpoint, EndpointHandler } from './types';

const HANDLERS: Partial<Record<Endpoint, EndpointHandler>> = {
  'chat.completions': chatHandler,
  embeddings: embeddingsHandler,
  'images.generations': imageGenerationsHandler,
  'images.edits': imageEditsHandler,
  'audio.speech': speechHandler,
  'audio.transcriptions': transcriptionHandler,
  'music.generations': musicHandler,
};

export function handlerFor(endpoint: Endpoint): EndpointHandler {
  const handler = HANDLERS[endpoint];
  if (!handler) throw new Error(`no handler for endpoint ${endpoint}`);
  return handler;
}

export function registerHandler(handler: EndpointHandler): void {
  HANDLERS[handler.endpoint] = handler;
}
