/** The endpoint handlers the request workflow can run, by endpoint. */
import { chatHandler } from './chat/handler';
import { responsesHandler } from './responses/handler';
import { messagesHandler } from './messages/handler';
import { completionsHandler } from './completions/handler';
import { embeddingsHandler } from './embeddings/handler';
import { imageEditsHandler, imageGenerationsHandler, imageVariationsHandler } from './images/handler';
import { musicHandler } from './music/handler';
import { moderationsHandler } from './moderations/handler';
import { speechHandler } from './audio/speech';
import { transcriptionHandler, translationHandler } from './audio/transcription';
import type { Endpoint, EndpointHandler } from './types';

const HANDLERS: Partial<Record<Endpoint, EndpointHandler>> = {
  'chat.completions': chatHandler,
  responses: responsesHandler,
  messages: messagesHandler,
  completions: completionsHandler,
  embeddings: embeddingsHandler,
  'images.generations': imageGenerationsHandler,
  'images.edits': imageEditsHandler,
  'images.variations': imageVariationsHandler,
  'audio.speech': speechHandler,
  'audio.transcriptions': transcriptionHandler,
  'audio.translations': translationHandler,
  'music.generations': musicHandler,
  moderations: moderationsHandler,
};

export function handlerFor(endpoint: Endpoint): EndpointHandler {
  const handler = HANDLERS[endpoint];
  if (!handler) throw new Error(`no handler for endpoint ${endpoint}`);
  return handler;
}

export function registerHandler(handler: EndpointHandler): void {
  HANDLERS[handler.endpoint] = handler;
}
