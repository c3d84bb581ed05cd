/** `POST /v1/embeddings`. */
import Router from '@koa/router';
import { validateEmbeddingsBody } from '../../endpoints/embeddings/body';
import type { AppDeps, GatewayState } from '../http/context';
import { serveJsonModelRequest } from '../requests/run';

export function embeddingsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/embeddings', (ctx) => serveJsonModelRequest(ctx, deps, 'embeddings', validateEmbeddingsBody));
  return router;
}
