/**
 * The first middleware: the one place errors become HTTP. Gateway errors keep their status, code, param and
 * headers; Temporal failures are unwrapped to the gateway error they carry. A 500 never carries an
 * exception's text (it may name code paths, files or data): the client gets a generic message and the
 * request id, the log gets the rest. Anthropic's routes (api/messages/shape.ts) get Anthropic's error shape and statuses.
 */
import type Koa from 'koa';
import { GatewayError, InternalError, MethodNotAllowedError, NotFoundError } from '../../core/errors';
import { toGatewayError } from '../../activities/failures';
import type { Logger } from '../../core/log';
import { outageError } from '../../core/outages';
import { anthropicError, anthropicErrorBody } from '../../endpoints/messages/errors';
import { speaksAnthropic } from '../messages/shape';

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
      const found = toGatewayError(caught);
      // An unexpected failure that is an outage of a dependency (database, Temporal) is a 503 with Retry-After.
      const outage = found instanceof InternalError && found !== caught ? outageError(caught) : null;
      if (outage) log.warn({ err: caught, requestId: ctx.state.requestId, path: ctx.path }, 'a dependency is unavailable');
      const err = outage ?? clientError(found, ctx.state.requestId);
      if (err.status === 500) log.error({ err: caught, requestId: ctx.state.requestId, path: ctx.path }, 'internal error');
      if (ctx.headerSent || !ctx.writable) {
        // A stream already started: the route writes its own error event; nothing more can be sent.
        log.warn({ err: caught, requestId: ctx.state.requestId }, 'error after headers were sent');
        return;
      }
      for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
      if (speaksAnthropic(ctx)) {
        ctx.status = anthropicError(err).status;
        ctx.body = anthropicErrorBody(err, ctx.state.requestId ?? null);
      } else {
        ctx.status = err.status;
        ctx.body = errorBody(err);
      }
      if (err.status >= 500) log.warn({ requestId: ctx.state.requestId, status: err.status, code: err.code, msg: err.message }, 'request failed');
    }
  };
}

/** The error as a client may see it: an internal error's own text is replaced by a generic one naming the request. */
export function clientError(err: GatewayError, requestId: string): GatewayError {
  if (!(err instanceof InternalError)) return err;
  return new InternalError(`The server had an error while processing your request. Retry, and quote the request id ${requestId} if it persists.`);
}

export function errorBody(err: GatewayError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return { error: { message: err.message, type: err.type, param: err.param, code: err.code } };
}
