/**
 * The global per-IP safety net (5000 requests per 10 minutes), shared by every API process through the
 * window counters (Postgres, or Redis when configured). It is answered before authentication so floods of
 * bad keys are limited too. On `/v1` the authentication counts it itself (api/http/auth.ts), alongside the
 * key lookup or in the same statement, and answers its refusal first.
 */
import type Koa from 'koa';
import { RateLimitError } from '../../core/errors';
import type { WindowCounters, WindowHit } from '../../domain/rate-limits';

export const IP_LIMIT = 5000;
export const IP_WINDOW_MS = 10 * 60_000;

export interface IpNet {
  counters: WindowCounters;
  limit?: number;
  windowMs?: number;
}

/** The window this request's address counts in. */
export function ipWindowOf(ctx: Pick<Koa.Context, 'ip'>, net: IpNet): { bucket: string; windowMs: number; limit: number } {
  return { bucket: `ip:${ctx.ip}`, windowMs: net.windowMs ?? IP_WINDOW_MS, limit: net.limit ?? IP_LIMIT };
}

/** The refusal of a hit past the limit (null: within it). */
export function ipRefusal(hit: WindowHit, windowMs: number): RateLimitError | null {
  if (hit.allowed) return null;
  return new RateLimitError(`Too many requests from this address: the limit is ${hit.limit} requests per ${windowMs / 60_000} minutes.`, {
    retryAfterSeconds: hit.resetMs / 1000,
    code: 'rate_limit_exceeded',
  });
}

/** Counts this request's hit; throws the refusal past the limit. */
export async function checkIp(ctx: Pick<Koa.Context, 'ip'>, net: IpNet): Promise<void> {
  const { bucket, windowMs, limit } = ipWindowOf(ctx, net);
  const refusal = ipRefusal(await net.counters.hit(bucket, windowMs, limit), windowMs);
  if (refusal) throw refusal;
}

export function ipLimitMiddleware(counters: WindowCounters, opts: { limit?: number; windowMs?: number } = {}): Koa.Middleware {
  const net: IpNet = { counters, ...opts };
  return async (ctx, next) => {
    await checkIp(ctx, net);
    await next();
  };
}
