/** `POST /v1/moderations` (`model` defaults to OpenAI's `omni-moderation-latest`). */
import Router from '@koa/router';
import { validateModerationBody } from '../../endpoints/moderations/body';
import type { AppDeps, GatewayState } from '../http/context';
import { serveJsonModelRequest } from '../requests/run';

export function moderationsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/moderations', (ctx) => serveJsonModelRequest(ctx, deps, 'moderations', validateModerationBody));
  return router;
}
