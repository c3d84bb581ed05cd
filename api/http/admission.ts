/**
 * Admission control for model endpoints: a bound on the model requests this process serves at once.
 * Past it, a request is answered at once with 503 `server_overloaded` and Retry-After instead of queueing
 * behind the others until everyone's latency (and memory) runs away; official clients retry 503s after
 * Retry-After. The bound is per process: more API processes, more room (bench/README.md, scale-out).
 */
import type Koa from 'koa';
import { GatewayError } from '../../core/errors';
import type { GatewayMetrics } from '../../infra/metrics';

/** 503: this process is at its in-flight bound; another try (here or on another process) may be taken. */
export class ServerOverloadedError extends GatewayError {
  readonly status = 503;
  readonly type = 'server_error' as const;
  constructor(retryAfterSeconds: number) {
    super('The gateway is serving as many requests as it can right now. Retry after the number of seconds in Retry-After.', {
      code: 'server_overloaded',
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

/**
 * `limit`: requests served at once (0: no bound); `applies`: which requests count (model endpoints). It runs
 * first, so a refusal costs no database work. The in-flight count is kept (and exported) either way. A
 * request holds its place until its handler returns, a stream until its last byte, and a request answered
 * before its run's last step (a first hop's answer) until that run ended (`ctx.state.inFlightUntil`): the
 * bound then covers the runs this process's worker still has to finish, not only open connections.
 */
export function admissionMiddleware(opts: { limit: number; applies: (ctx: Koa.Context) => boolean; metrics?: GatewayMetrics | null; retryAfterSeconds?: number }): Koa.Middleware {
  const retryAfter = opts.retryAfterSeconds ?? 1;
  let inFlight = 0;
  return async (ctx, next) => {
    if (!opts.applies(ctx)) {
      await next();
      return;
    }
    if (opts.limit > 0 && inFlight >= opts.limit) {
      opts.metrics?.rejected.inc();
      throw new ServerOverloadedError(retryAfter);
    }
    inFlight++;
    opts.metrics?.inFlight.inc();
    const after: Array<Promise<unknown>> = [];
    ctx.state.inFlightUntil = (work: Promise<unknown>) => { after.push(work); };
    const leave = () => {
      inFlight--;
      opts.metrics?.inFlight.dec();
    };
    try {
      await next();
    } finally {
      if (after.length === 0) leave();
      else void Promise.allSettled(after).then(leave);
    }
  };
}
