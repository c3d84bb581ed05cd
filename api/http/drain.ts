/**
 * The shutdown refusal: once the process is draining (a SIGTERM or SIGINT, main/process-lifecycle.ts) every new
 * request is answered 503 `server_shutting_down` with `Retry-After: 1` and `Connection: close` before anything is
 * read or charged, so a client (or a load balancer that has not yet seen /readyz fail) sends it to another
 * instance. Requests already past this point run on; their answers close their connections too.
 */
import type Koa from 'koa';
import { ServiceUnavailableError } from '../../core/errors';
import type { Draining } from '../../infra/probes';

export function drainMiddleware(draining: Draining | undefined): Koa.Middleware {
  return async (ctx, next) => {
    if (draining?.active) {
      ctx.set('connection', 'close');
      throw new ServiceUnavailableError('The server is shutting down and takes no new requests; send the request again (another instance will take it).', {
        code: 'server_shutting_down', retryAfterSeconds: 1,
      });
    }
    await next();
    if (draining?.active && !ctx.headerSent) ctx.set('connection', 'close');
  };
}
