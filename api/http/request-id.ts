import type Koa from 'koa';
import { newRequestId } from '../../core/ids';

/** Gives every request a UUID, echoed as `x-request-id` on every response (errors included). */
export function requestIdMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.state.startedAt = performance.now();
    const clientRequestId = ctx.get('x-request-id');
    // A client's own id is kept for its tracking (recorded with the usage), never trusted as ours.
    if (clientRequestId) ctx.state.clientRequestId = clientRequestId.slice(0, 200);
    ctx.set('x-request-id', requestId);
    await next();
  };
}
