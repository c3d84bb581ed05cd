/**
 * Liveness and readiness, the same on every process: `/livez` answers while the process runs and its event
 * loop turns (it checks no dependency, so an outage never gets a process restarted); `/readyz` answers 200
 * only while Postgres and Temporal answer and the process is not shutting down (draining), else 503.
 * The API serves them on its port (api/system/health.ts), a process without the API on its health port
 * (infra/metrics.ts `serveWorkerEndpoints`).
 */

/** A dependency check's answer, as /healthz and /readyz report it. */
export interface ProbeResult {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

/** Whether this process is shutting down: set once, at the first SIGTERM or SIGINT. */
export class Draining {
  private since: number | null = null;

  get active(): boolean {
    return this.since !== null;
  }

  begin(): void {
    this.since ??= Date.now();
  }
}

/** What /readyz checks: Postgres (`select 1`) and Temporal (`GetSystemInfo`). */
export interface ReadinessChecks {
  postgres(): Promise<void>;
  temporal(): Promise<void>;
}

/** The checks against this process's own database handle and Temporal client. */
export function readinessChecks(deps: { db: { raw(sql: string): PromiseLike<unknown> }; temporal: { workflowService: { getSystemInfo(request: object): PromiseLike<unknown> } } }): ReadinessChecks {
  return {
    postgres: async () => { await deps.db.raw('select 1'); },
    temporal: async () => { await deps.temporal.workflowService.getSystemInfo({}); },
  };
}

export interface ProbeAnswer {
  status: 200 | 503;
  body: Record<string, unknown>;
}

export function liveness(): ProbeAnswer {
  return { status: 200, body: { status: 'ok', uptime_s: Math.round(process.uptime()) } };
}

export async function readiness(checks: ReadinessChecks, draining: Draining): Promise<ProbeAnswer> {
  // A draining process is taken out of rotation at once, whatever its dependencies say.
  if (draining.active) return { status: 503, body: { status: 'draining' } };
  const [postgres, temporal] = await Promise.all([probe(checks.postgres), probe(checks.temporal)]);
  const ready = postgres.ok && temporal.ok;
  return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', postgres, temporal } };
}

export async function probe(check: () => Promise<void>): Promise<ProbeResult> {
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
