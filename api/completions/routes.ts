/** `POST /v1/completions`: legacy text completions, served by every chat model (endpoints/completions). */
import Router from '@koa/router';
import { validateCompletionBody } from '../../endpoints/completions/body';
import type { AppDeps, GatewayState } from '../http/context';
import { serveJsonModelRequest } from '../requests/run';

export function completionsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.post('/completions', (ctx) => serveJsonModelRequest(ctx, deps, 'completions', validateCompletionBody));
  return router;
}
