/**
 * The Responses API. `POST /v1/responses` is a model endpoint (quotas, credits, fallback, Idempotency-Key,
 * streaming) serving every chat model; the stored responses are read and deleted under
 * `/v1/responses/{id}` (read like files: `files.read`; deleted with `files.write`), always within the key's workspace (another workspace's id is a 404 like any unknown id).
 */
import Router from '@koa/router';
import { InvalidRequestError } from '../../core/errors';
import { deleteResponse, findResponse, listInputItems, responseNotFound, type InputItemsQuery } from '../../domain/responses';
import { HARMLESS_INCLUDES, validateResponsesBody } from '../../endpoints/responses/body';
import { prepareResponsesRequest } from '../../endpoints/responses/request';
import { streamChatAnswer } from '../chat/stream';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';

export function responsesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/responses', async (ctx) => {
    const body = validateResponsesBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    const request = await prepareResponsesRequest(deps.db, ctx.state.auth.workspaceId, ctx.state.requestId, body);
    await checkRequestedModel(ctx, deps, 'responses', body.model, request);
    if (body.stream) {
      await streamChatAnswer(ctx, deps, { endpoint: 'responses', model: body.model, body: request });
      return;
    }
    // A retry with the same Idempotency-Key sends the same body; the item ids prepared for it differ.
    const result = await runModelRequest(ctx, deps, { endpoint: 'responses', model: body.model, body: request, idempotencyBody: body });
    await sendModelResponse(ctx, deps, result);
  });
  return router;
}

export function storedResponsesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/responses/:responseId', requirePermission('files.read'), async (ctx) => {
    refuseUnknownQuery(ctx.query, []);
    const response = await findResponse(deps.db, ctx.state.auth.workspaceId, ctx.params.responseId);
    if (!response) throw responseNotFound(ctx.params.responseId);
    ctx.body = response;
  });

  router.delete('/responses/:responseId', requirePermission('files.write'), async (ctx) => {
    if (!(await deleteResponse(deps.db, ctx.state.auth.workspaceId, ctx.params.responseId))) throw responseNotFound(ctx.params.responseId);
    ctx.body = { id: ctx.params.responseId, object: 'response', deleted: true };
  });

  router.get('/responses/:responseId/input_items', requirePermission('files.read'), async (ctx) => {
    const page = await listInputItems(deps.db, ctx.state.auth.workspaceId, ctx.params.responseId, parseInputItemsQuery(ctx.query));
    if (!page) throw responseNotFound(ctx.params.responseId);
    if ('unknownCursor' in page) throw new InvalidRequestError(`Invalid 'after': no input item '${ctx.query.after}' to page after.`, { param: 'after', code: 'invalid_value' });
    const data = page.items;
    ctx.body = { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: page.hasMore };
  });

  return router;
}

type Query = Record<string, string | string[] | undefined>;

function refuseUnknownQuery(query: Query, known: string[]): void {
  for (const name of Object.keys(query)) {
    if (!known.includes(name)) throw new InvalidRequestError(`Unrecognized query parameter: '${name}'.`, { param: name, code: 'unknown_parameter' });
  }
}

function parseInputItemsQuery(query: Query): InputItemsQuery {
  refuseUnknownQuery(query, ['limit', 'order', 'after', 'include', 'include[]']);
  const single = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) throw new InvalidRequestError(`'${name}' may be given once.`, { param: name, code: 'invalid_value' });
    return value;
  };
  const limit = Number(single('limit') ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw new InvalidRequestError("Invalid 'limit': expected an integer from 1 to 100.", { param: 'limit', code: 'invalid_value' });
  }
  const order = single('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new InvalidRequestError("Invalid 'order': expected 'asc' or 'desc'.", { param: 'order', code: 'invalid_value' });
  for (const value of [query.include ?? [], query['include[]'] ?? []].flat()) {
    if (!HARMLESS_INCLUDES.has(value)) throw new InvalidRequestError(`'${value}' cannot be included by this gateway.`, { param: 'include', code: 'unsupported_parameter' });
  }
  const after = single('after');
  return { limit, order, ...(after ? { after } : {}) };
}
