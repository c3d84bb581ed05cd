/**
 * `POST /v1/responses` (not streamed) as an endpoint handler: the request is asked as the equivalent chat
 * request, so every chat model of every provider serves it with the chat endpoint's checks, reservation
 * and pricing; the answer comes back as a Response object (kept for `previous_response_id` unless `store`
 * is false).
 */
import { InvalidRequestError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import { chatHandler, generateChat } from '../chat/handler';
import type { EndpointHandler } from '../types';
import { responseIds } from './items';
import { holdsImages, inResponsesTerms, toChatBody, type ResponsesRequest } from './request';
import { answerEntries, finishedStatus, keepResponse, outputItem, responseObject } from './response';

export const responsesHandler: EndpointHandler<ResponsesRequest> = {
  endpoint: 'responses',
  modality: 'chat',

  check(record, req) {
    // Images named by file id reach the chat check as files; the Responses request says they are images.
    if (holdsImages(req) && !record.capabilities.vision) {
      throw new InvalidRequestError(`Model '${record.slug}' does not accept image input.`, { code: 'image_not_supported_by_model', param: 'input' });
    }
    try {
      chatHandler.check(record, toChatBody(req));
    } catch (err) {
      throw inResponsesTerms(err);
    }
  },

  estimate(record, req) {
    return chatHandler.estimate(record, toChatBody(req));
  },

  async call(record, req, env) {
    const { result, chargeMicro } = await generateChat(record, toChatBody(req), env).catch((err) => {
      throw inResponsesTerms(err);
    });
    const status = finishedStatus(result.finishReason);
    const output = answerEntries(env.requestId, result).map((entry) => outputItem(entry, status));
    const response = {
      ...responseObject(req, { id: responseIds(env.requestId).response, createdAt: env.created, model: record.slug, status, output, usage: result.usage, finishReason: result.finishReason }),
      credits_used: microToCredits(chargeMicro),
    };
    await keepResponse(env.db, env.workspaceId, req, response);
    return {
      response: { kind: 'json', body: response },
      chargeMicro,
      usage: { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens },
    };
  },
};
