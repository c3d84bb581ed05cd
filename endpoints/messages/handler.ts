/**
 * `POST /v1/messages` (not streamed) as an endpoint handler: the request is asked as the equivalent chat
 * request (endpoints/messages/request.ts), so every chat model serves it with the chat endpoint's checks,
 * reservation and pricing; the answer comes back as Anthropic's Message object.
 */
import { microToCredits } from '../../core/money';
import { chatHandler, generateChat } from '../chat/handler';
import type { EndpointHandler } from '../types';
import type { MessagesBody } from './body';
import { inMessagesTerms, toChatBody } from './request';
import { contentBlocks, messageObject } from './response';

export const messagesHandler: EndpointHandler<MessagesBody> = {
  endpoint: 'messages',
  modality: 'chat',

  check(record, body) {
    try {
      chatHandler.check(record, toChatBody(body, record));
    } catch (err) {
      throw inMessagesTerms(err);
    }
  },

  estimate(record, body) {
    return chatHandler.estimate(record, toChatBody(body, record));
  },

  async call(record, body, env) {
    const { result, chargeMicro } = await generateChat(record, toChatBody(body, record), env).catch((err) => {
      throw inMessagesTerms(err);
    });
    const message = messageObject({ requestId: env.requestId, model: record.slug, content: contentBlocks(result), finishReason: result.finishReason, usage: result.usage });
    return {
      response: { kind: 'json', body: { ...message, credits_used: microToCredits(chargeMicro) } },
      chargeMicro,
      usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
    };
  },
};
