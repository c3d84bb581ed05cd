/**
 * With tracing on (infra/tracing.ts), each `/v1` request runs inside a server span, continuing the
 * caller's trace when it sends `traceparent`. Temporal's client interceptor carries that span into the
 * workflow, and from there into activities and their upstream calls.
 */
import type Koa from 'koa';
import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Tracing } from '../../infra/tracing';
import { matchedRoute } from './metrics';

export function tracingMiddleware(tracing: Tracing | null | undefined): Koa.Middleware {
  if (!tracing) return (_ctx, next) => next();
  return (ctx, next) => {
    if (!ctx.path.startsWith('/v1/')) return next();
    const parent = propagation.extract(context.active(), ctx.headers);
    return tracing.tracer.startActiveSpan(`${ctx.method} ${ctx.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path } }, parent, async (span) => {
      try {
        await next();
      } finally {
        const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
        span.updateName(`${ctx.method} ${matchedRoute(ctx)}`);
        span.setAttributes({ 'http.route': matchedRoute(ctx), 'http.response.status_code': status, 'gateway.request_id': String(ctx.state.requestId ?? '') });
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
    });
  };
}
