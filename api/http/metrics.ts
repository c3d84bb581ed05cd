/**
 * Operators' metrics: a middleware that records every answered request (route, status, latency, the
 * fallback depth the response reports) and `GET /metrics` in Prometheus text format. Credits are counted
 * where they are settled, not here (main/runtime.ts), so streams and video jobs count too. The route exists
 * only while metrics are enabled (METRICS_ENABLED, default on) and answers only `Authorization: Bearer
 * <operator token>` whenever there is one: OPERATOR_TOKEN, or outside production the development token
 * generated into the data dir (in production without OPERATOR_TOKEN it is as open as the listen address).
 */
import type Koa from 'koa';
import Router from '@koa/router';
import { AuthenticationError } from '../../core/errors';
import { operatorAuthorized, type GatewayMetrics } from '../../infra/metrics';
import type { AppDeps, GatewayState } from './context';

/** The route pattern a request matched (`/v1/files/:id`), so label values stay bounded. */
export function matchedRoute(ctx: Koa.Context): string {
  const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof route === 'string' ? route : 'unmatched';
}

export function metricsMiddleware(metrics: GatewayMetrics | null | undefined): Koa.Middleware {
  if (!metrics) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // A stream writes the response itself (ctx.respond = false): its status and headers are on res.
      const header = (name: string) => Number(ctx.res.getHeader(name) ?? NaN);
      metrics.observeRequest({
        endpoint: matchedRoute(ctx),
        method: ctx.method,
        status: ctx.respond === false ? ctx.res.statusCode : ctx.status,
        seconds: (performance.now() - started) / 1000,
        fallbackDepth: header('x-fallback-depth') || undefined,
      });
    }
  };
}

export function metricsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const metrics = deps.metrics;
  if (!metrics) return router;
  router.get('/metrics', async (ctx) => {
    if (!operatorAuthorized(ctx.get('authorization'), deps.operators.token)) {
      throw new AuthenticationError('The metrics need the operator token: send it as "Authorization: Bearer <OPERATOR_TOKEN>".', { code: 'invalid_operator_token' });
    }
    ctx.type = metrics.contentType;
    ctx.body = await metrics.render();
  });
  return router;
}
