/**
 * The first middleware: the one place errors become HTTP. Gateway errors keep their status, code, param and
 * headers; Temporal failures are unwrapped to the gateway error they carry; anything else is a 500 with a
 * generic message (details go to the log, not the client).
 */
import type Koa from 'koa';
import { GatewayError, InternalError, MethodNotAllowedError, NotFoundError } from '../../core/errors';
import { toGatewayError } from '../../activities/failures';
import type { Logger } from '../../core/log';

export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Statuses set without a body (the router's 404, 405 and 501) get the error shape too.
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new NotFoundError(`Unknown request URL: ${ctx.method} ${ctx.path}`, { code: 'unknown_url' });
      }
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null) {
        const allow = ctx.response.get('allow');
        throw new MethodNotAllowedError(`${ctx.method} is not allowed on ${ctx.path}${allow ? `; allowed: ${allow}` : ''}.`, { allow, status: ctx.status });
      }
    } catch (caught) {
      let err: GatewayError = toGatewayError(caught);
      const unexpected = err instanceof InternalError && err !== caught;
      if (unexpected) {
        log.error({ err: caught, requestId: ctx.state.requestId, path: ctx.path }, 'unhandled error');
        err = new InternalError('The server had an error while processing your request. Retry, and quote the x-request-id if it persists.');
      }
      if (ctx.headerSent || !ctx.writable) {
        // A stream already started: the route writes its own error event; nothing more can be sent.
        log.warn({ err: caught, requestId: ctx.state.requestId }, 'error after headers were sent');
        return;
      }
      ctx.status = err.status;
      for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
      ctx.body = { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
      if (err.status >= 500) log.warn({ requestId: ctx.state.requestId, status: err.status, code: err.code, msg: err.message }, 'request failed');
    }
  };
}
