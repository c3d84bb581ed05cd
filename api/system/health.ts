/**
 * `GET /healthz` (no auth): can we reach Postgres, Temporal and S3? 503 (`unavailable`) when Postgres or
 * Temporal is down; 200 `degraded` when only S3 is (requests that need no storage, such as chat, are served).
 *
 * `GET /livez` and `GET /readyz` (no auth) are the probes of an orchestrator (infra/probes.ts): /livez 200
 * while the process runs; /readyz 200 only while Postgres and Temporal answer and the process is not
 * shutting down (503 `draining` from its first moment).
 */
import Router from '@koa/router';
import type { AppDeps, GatewayState } from '../http/context';
import { Draining, liveness, probe, readiness, readinessChecks } from '../../infra/probes';

export function healthRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/healthz', async (ctx) => {
    const checks = readinessChecks({ db: deps.db, temporal: deps.temporal.client });
    const [postgres, temporal, s3] = await Promise.all([probe(checks.postgres), probe(checks.temporal), probe(() => deps.storage.ping())]);
    const serving = postgres.ok && temporal.ok;
    ctx.status = serving ? 200 : 503;
    ctx.body = { status: !serving ? 'unavailable' : s3.ok ? 'ok' : 'degraded', postgres, temporal, s3 };
  });
  return router;
}

/** `/livez` and `/readyz`, mounted before the Host check and the shutdown refusal (orchestrators probe by address). */
export function probesRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  const draining = deps.draining ?? new Draining();
  router.get('/livez', (ctx) => {
    const answer = liveness();
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  router.get('/readyz', async (ctx) => {
    const answer = await readiness(readinessChecks({ db: deps.db, temporal: deps.temporal.client }), draining);
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  return router;
}
