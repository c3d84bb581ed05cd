/**
 * `GET /healthz` (no auth): can we reach Postgres, Temporal and S3? 503 (`unavailable`) when Postgres or
 * Temporal is down; 200 `degraded` when only S3 is (requests that need no storage, such as chat, are served).
 */
import Router from '@koa/router';
import type { AppDeps, GatewayState } from '../http/context';

export function healthRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();
  router.get('/healthz', async (ctx) => {
    const [postgres, temporal, s3] = await Promise.all([
      probe(async () => { await deps.db.raw('select 1'); }),
      probe(async () => { await deps.temporal.client.workflowService.getSystemInfo({}); }),
      probe(() => deps.storage.ping()),
    ]);
    const serving = postgres.ok && temporal.ok;
    ctx.status = serving ? 200 : 503;
    ctx.body = { status: !serving ? 'unavailable' : s3.ok ? 'ok' : 'degraded', postgres, temporal, s3 };
  });
  return router;
}

async function probe(check: () => Promise<void>): Promise<{ ok: boolean; latency_ms: number; error?: string }> {
  const started = performance.now();
  try {
    await withTimeout(check(), 3000);
    return { ok: true, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), error: err instanceof Error ? err.message : String(err) };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms); }),
  ]);
}
