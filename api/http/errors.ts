/**
 * The first middleware: the one place errors become HTTP. Gateway errors keep their status, code, param and
 * headers; Temporal failures are unwrapped to the gateway error they carry; anything else is a 500 with a
 * generic message (details go to the log, not the client).
 */
import type Koa from 'koa';
import { GatewayError, InternalError, NotFoundError } from '../../core/errors';
import { toGatewayError } from '../../activities/failures';
import type { Logger } from '../../core/log';
import { outageError } from './outages';

export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new NotFoundError(`Unknown request URL: ${ctx.method} ${ctx.path}`, { code: 'unknown_url' });
      }
    } catch (caught) {
      let err: GatewayError = toGatewayError(caught);
      const unexpected = err instanceof InternalError && err !== caught;
      const outage = unexpected ? outageError(caught) : null;
      if (outage) {
        log.warn({ err: caught, requestId: ctx.state.requestId, path: ctx.path }, 'a dependency is unavailable');
        err = outage;
      } else if (unexpected) {
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
