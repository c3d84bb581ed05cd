/**
 * Anthropic's Messages API. `POST /v1/messages` is a model endpoint (quotas, credits, fallback,
 * Idempotency-Key, streaming in Anthropic's events) serving every chat model through the chat request
 * path (Anthropic's own models are sent the request as it came, with its `anthropic-beta` flags); `POST /v1/messages/count_tokens` estimates a request's input tokens without calling a model.
 * Errors on these routes are in Anthropic's shape (api/http/errors.ts).
 */
import Router from '@koa/router';
import { checkUsable, eligibleModel } from '../../domain/model-eligibility';
import { modelAccessOf } from '../http/model-access';
import { validateCountTokensBody, validateMessagesBody } from '../../endpoints/messages/body';
import { inMessagesTerms, toChatBody, type MessagesRequest } from '../../endpoints/messages/request';
import { promptCharacters } from '../../endpoints/chat/request';
import { estimateTokens } from '../../endpoints/chat/tokens';
import { streamChatAnswer } from '../chat/stream';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';

export function messagesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/messages', async (ctx) => {
    const body = validateMessagesBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    // The beta flags matter to Anthropic's models, which are sent the request as it came.
    const request: MessagesRequest = { body, beta: ctx.get('anthropic-beta') || null };
    await checkRequestedModel(ctx, deps, 'messages', body.model, request);
    if (body.stream) {
      await streamChatAnswer(ctx, deps, { endpoint: 'messages', model: body.model, body: request });
      return;
    }
    const result = await runModelRequest(ctx, deps, { endpoint: 'messages', model: body.model, body: request });
    await sendModelResponse(ctx, deps, result);
  });
  return router;
}

/**
 * Counting tokens reads the catalog only: no model is called and nothing is charged. A model the caller could
 * not send the request to is refused as `/v1/messages` would refuse it (domain/model-eligibility.ts).
 */
export function countTokensRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/messages/count_tokens', requirePermission('models.read'), async (ctx) => {
    const body = validateCountTokensBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const record = await eligibleModel(deps.catalog, { model: body.model, modality: 'chat', allowedModels: ctx.state.auth.allowedModels });
    await checkUsable(record, modelAccessOf(deps, ctx.state.auth), body.model);
    let chars: number;
    try {
      chars = promptCharacters(toChatBody(body, record));
    } catch (err) {
      throw inMessagesTerms(err);
    }
    ctx.body = { input_tokens: estimateTokens(chars) };
  });
  return router;
}
