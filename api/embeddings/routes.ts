/** `POST /v1/embeddings`. */
import Router from '@koa/router';
import { validateEmbeddingsBody } from '../../endpoints/embeddings/body';
import { readJsonBody } from '../http/body';
import type { AppDeps, GatewayState } from '../http/context';
import { checkRequestedModel, runModelRequest, sendModelResponse } from '../requests/run';

export function embeddingsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/embeddings', async (ctx) => {
    const body = validateEmbeddingsBody(await readJsonBody(ctx, deps.config.maxJsonBodyBytes));
    await checkRequestedModel(ctx, deps, 'embeddings', body.model, body);
    const result = await runModelRequest(ctx, deps, { endpoint: 'embeddings', model: body.model, body });
    await sendModelResponse(ctx, deps, result);
  });
  return router;
}
