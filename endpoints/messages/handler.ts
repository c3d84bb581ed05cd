/**
 * `POST /v1/messages` (not streamed) as an endpoint handler. Every model is checked, reserved for and priced
 * through the equivalent chat request (endpoints/messages/request.ts); Anthropic's own models are sent the
 * client's request as it came and answer with their own Message (its cache usage priced at the catalog's
 * cache rates), every other model answers the chat request, returned as Anthropic's Message object.
 */
import { microToCredits } from '../../core/money';
import { cacheUnits, chatHandler, generateChat } from '../chat/handler';
import type { ModelRecord } from '../../catalog/types';
import type { ChatResult } from '../../providers/types';
import type { CallEnv, CallOutcome, EndpointHandler } from '../types';
import { inMessagesTerms, nativeRequest, toChatBody, type MessagesRequest } from './request';
import { contentBlocks, messageObject } from './response';

export const messagesHandler: EndpointHandler<MessagesRequest> = {
  endpoint: 'messages',
  modality: 'chat',

  check(record, req) {
    try {
      chatHandler.check(record, toChatBody(req.body, record));
    } catch (err) {
      throw inMessagesTerms(err);
    }
  },

  estimate(record, req) {
    return chatHandler.estimate(record, toChatBody(req.body, record));
  },

  async call(record, req, env) {
    const { result, chargeMicro } = await generateChat(record, toChatBody(req.body, record), env, nativeRequest(req, record)).catch((err) => {
      throw inMessagesTerms(err);
    });
    return messagesOutcome(record, result, chargeMicro, env);
  },
};

/** The client's Message for a result (the upstream's own, when it answered the client's request as it came), and its charge. */
export function messagesOutcome(record: ModelRecord, result: ChatResult, chargeMicro: number, env: Pick<CallEnv, 'requestId'>): CallOutcome {
  const message = result.anthropicMessage
    ? { ...result.anthropicMessage, model: record.slug }
    : messageObject({ requestId: env.requestId, model: record.slug, content: contentBlocks(result), finishReason: result.finishReason, usage: result.usage });
  return {
    response: { kind: 'json', body: { ...message, credits_used: microToCredits(chargeMicro) } },
    chargeMicro,
    usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, ...withUnits(cacheUnits(result.usage)) },
  };
}

function withUnits(units: Record<string, number> | undefined): { units?: Record<string, number> } {
  return units ? { units } : {};
}
