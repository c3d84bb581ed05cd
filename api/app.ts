/**
 * Builds the Koa app without listening (api/server.ts owns the socket). Middleware order is the request's
 * path: request id -> metrics -> tracing -> error mapping -> probes (/livez, /readyz) -> shutdown refusal -> allowed hosts -> CORS (/v1) -> input checks (path and query) ->
 * (model endpoints: admission control) -> auth with the per-IP safety net -> permission guard
 * (domain/permissions.ts) -> (model endpoints: key quotas) -> routes. The web app's files and its /api
 * session endpoints sit beside /v1.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps, GatewayState } from './http/context';
import { errorMiddleware } from './http/errors';
import { allowedHostsMiddleware } from './http/allowed-hosts';
import { requestIdMiddleware } from './http/request-id';
import { corsMiddleware } from './http/cors';
import { authMiddleware, keyKindGuard } from './http/auth';
import { accountsRouter } from './accounts/routes';
import { playgroundRouter } from './playground/routes';
import { organizationRouter } from './organization/routes';
import { webAppMiddleware } from './http/static';
import { rejectControlCharacters } from './http/input-checks';
import { requirePermission } from './http/permissions';
import { healthRouter, probesRouter } from './system/health';
import { drainMiddleware } from './http/drain';
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
import { codecRouter } from './codec/routes';
import { stripeWebhookRouter } from './billing/stripe-webhook';
import { operatorRouter } from './operator/routes';
import { responsesRouter, storedResponsesRouter } from './responses/routes';
import { requestsRouter } from './requests/routes';
import { openAIVideoCreateRouter, openAIVideoJobsRouter } from './videos/openai-videos';
import { completionsRouter } from './completions/routes';
import { countTokensRouter, messagesRouter } from './messages/routes';
import { moderationsRouter } from './moderations/routes';
import { admissionMiddleware } from './http/admission';
import { metricsMiddleware, metricsRouter } from './http/metrics';
import { tracingMiddleware } from './http/tracing';
import { batchesRouter } from './batches/routes';
import { messageBatchesRouter } from './messages/batches';

export function createApp(deps: AppDeps): Koa<GatewayState> {
  const app = new Koa<GatewayState>({ proxy: deps.config.trustProxy });
  app.silent = true;
  app.use(requestIdMiddleware());
  app.use(metricsMiddleware(deps.metrics));
  app.use(tracingMiddleware(deps.tracing));
  app.use(errorMiddleware(deps.log));
  // Orchestrators probe by address (no allowed Host), draining or not; then a draining process refuses the rest.
  app.use(probesRouter(deps).routes());
  app.use(drainMiddleware(deps.draining));
  app.use(allowedHostsMiddleware(deps.config.allowedHosts));
  app.use(corsMiddleware({ origins: deps.config.corsAllowedOrigins, prefix: '/v1' }));
  app.use(metricsRouter(deps).routes());

  const health = healthRouter(deps);
  app.use(health.routes());
  // The operators' codec endpoint: outside /v1, its own credential (never an API key).
  const codec = codecRouter(deps);
  app.use(codec.routes());
  app.use(codec.allowedMethods());
  // Stripe's signed webhooks and the operators' endpoints: outside /v1, each with its own credential.
  const stripeWebhook = stripeWebhookRouter(deps);
  app.use(stripeWebhook.routes());
  app.use(stripeWebhook.allowedMethods());
  const operator = operatorRouter(deps);
  app.use(operator.routes());
  app.use(operator.allowedMethods());
  app.use(webAppMiddleware(deps.config.webDir));

  // The web app's session endpoints (sign-up, sign-in, workspaces, invitations).
  const accounts = accountsRouter(deps);
  app.use(accounts.routes());
  app.use(accounts.allowedMethods());
  const playground = playgroundRouter(deps);
  app.use(playground.routes());
  app.use(playground.allowedMethods());

  const v1 = new Router<GatewayState>({ prefix: '/v1' });
  v1.use(rejectControlCharacters());
  const modelEndpoint = (ctx: Koa.Context) => modelEndpoints.match(ctx.path.slice('/v1'.length), ctx.method).route;
  v1.use(admissionMiddleware({ limit: deps.config.maxInFlight, metrics: deps.metrics, applies: modelEndpoint }));
  // The per-IP net is counted by the authentication, with the key lookup (and a model endpoint's rpm hit).
  v1.use(authMiddleware(deps.db, { ipNet: { counters: deps.counters, limit: deps.config.ipRateLimit }, reachesKeyQuotas: modelEndpoint }));
  v1.use(keyKindGuard());
  // The management API takes admin keys and sessions, each route checking its own permission.
  const organization = organizationRouter(deps);
  v1.use(organization.routes(), organization.allowedMethods());
  const routers = v1Routers(deps);
  for (const router of routers.resources) {
    v1.use(router.routes(), router.allowedMethods());
  }
  // Model endpoints (and only they) spend credits and count against the key's quotas; a role that may not
  // use models is refused before its request counts. Mounted last: the group's middleware is mounted bare,
  // so only routes after it (its own) reach it.
  const modelEndpoints = new Router<GatewayState>();
  modelEndpoints.use(requirePermission('models.use'));
  modelEndpoints.use(keyQuotaMiddleware(deps.counters));
  for (const router of routers.modelEndpoints) {
    modelEndpoints.use(router.routes(), router.allowedMethods());
  }
  v1.use(modelEndpoints.routes(), modelEndpoints.allowedMethods());
  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}

/** The `/v1` routers of project keys: workspace resources (each route guarded by its own permission) and the model endpoints. */
export function v1Routers(deps: AppDeps): { resources: Router<GatewayState>[]; modelEndpoints: Router<GatewayState>[] } {
  return {
    resources: [
      modelsRouter(deps), pingRouter(deps), fallbackChainsRouter(deps), filesRouter(deps), videoJobsRouter(deps), requestsRouter(deps),
      storedResponsesRouter(deps), openAIVideoJobsRouter(deps), billingRouter(deps), budgetAlertsRouter(deps), countTokensRouter(deps),
      batchesRouter(deps), messageBatchesRouter(deps),
    ],
    modelEndpoints: [
      chatRouter(deps), responsesRouter(deps), messagesRouter(deps), completionsRouter(deps), embeddingsRouter(deps), moderationsRouter(deps), imagesRouter(deps),
      audioRouter(deps), musicRouter(deps), videoGenerationsRouter(deps), openAIVideoCreateRouter(deps),
    ],
  };
}
