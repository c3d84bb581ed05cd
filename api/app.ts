/**
 * Builds the Koa app without listening (api/server.ts owns the socket). Middleware order is the request's
 * path: request id -> metrics -> tracing -> error mapping -> (model endpoints: admission control) -> per-IP
 * safety net -> auth -> (model endpoints: key quotas) -> routes.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps, GatewayState } from './http/context';
import { errorMiddleware } from './http/errors';
import { requestIdMiddleware } from './http/request-id';
import { ipLimitMiddleware } from './http/ip-limit';
import { authMiddleware } from './http/auth';
import { healthRouter } from './system/health';
import { modelsRouter } from './models/routes';
import { pingRouter } from './system/ping';
import { fallbackChainsRouter } from './fallback-chains/routes';
import { chatRouter } from './chat/routes';
import { embeddingsRouter } from './embeddings/routes';
import { imagesRouter } from './images/routes';
import { audioRouter } from './audio/routes';
import { musicRouter } from './music/routes';
import { keyQuotaMiddleware } from './http/key-quotas';
import { billingRouter } from './billing/routes';
import { budgetAlertsRouter } from './billing/budget-alerts';
import { filesRouter } from './files/routes';
import { videoGenerationsRouter, videoJobsRouter } from './videos/routes';
import { admissionMiddleware } from './http/admission';
import { metricsMiddleware, metricsRouter } from './http/metrics';
import { tracingMiddleware } from './http/tracing';

export function createApp(deps: AppDeps): Koa<GatewayState> {
  const app = new Koa<GatewayState>({ proxy: deps.config.trustProxy });
  app.silent = true;
  app.use(requestIdMiddleware());
  app.use(metricsMiddleware(deps.metrics));
  app.use(tracingMiddleware(deps.tracing));
  app.use(errorMiddleware(deps.log));
  app.use(metricsRouter(deps).routes());

  const health = healthRouter(deps);
  app.use(health.routes());

  const v1 = new Router<GatewayState>({ prefix: '/v1' });
  v1.use(admissionMiddleware({ limit: deps.config.maxInFlight, metrics: deps.metrics, applies: (ctx) => modelEndpoints.match(ctx.path.slice('/v1'.length), ctx.method).route }));
  v1.use(ipLimitMiddleware(deps.db, { limit: deps.config.ipRateLimit }));
  v1.use(authMiddleware(deps.db));
  for (const router of [modelsRouter(deps), pingRouter(deps), fallbackChainsRouter(deps), filesRouter(deps), videoJobsRouter(deps)]) {
    v1.use(router.routes(), router.allowedMethods());
  }
  // Billing and budget alerts (role-guarded inside).
  for (const router of [billingRouter(deps), budgetAlertsRouter(deps)]) {
    v1.use(router.routes(), router.allowedMethods());
  }
  // Model endpoints (and only they) count against the key's quotas.
  const modelEndpoints = new Router<GatewayState>();
  modelEndpoints.use(keyQuotaMiddleware(deps.db));
  for (const router of [chatRouter(deps), embeddingsRouter(deps), imagesRouter(deps), audioRouter(deps), musicRouter(deps), videoGenerationsRouter(deps)]) {
    modelEndpoints.use(router.routes(), router.allowedMethods());
  }
  v1.use(modelEndpoints.routes(), modelEndpoints.allowedMethods());
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}
