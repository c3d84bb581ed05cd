/**
 * The global per-IP safety net (5000 requests per 10 minutes), shared by every API process through the
 * window counters (Postgres, or Redis when configured). It is answered before authentication so floods of
 * bad keys are limited too.
 */
import type Koa from 'koa';
import { RateLimitError } from '../../core/errors';
import type { WindowCounters } from '../../domain/rate-limits';

export const IP_LIMIT = 5000;
export const IP_WINDOW_MS = 10 * 60_000;

/**
 * `beforeAuthentication`: the check runs alongside the authentication that follows it (api/http/auth.ts awaits
 * it with the key lookup, and answers its refusal first), saving a round trip; by default it is awaited here.
 */
export function ipLimitMiddleware(counters: WindowCounters, opts: { limit?: number; windowMs?: number; beforeAuthentication?: boolean } = {}): Koa.Middleware {
  const limit = opts.limit ?? IP_LIMIT;
  const windowMs = opts.windowMs ?? IP_WINDOW_MS;
  return async (ctx, next) => {
    const check = counters.hit(`ip:${ctx.ip}`, windowMs, limit).then((hit) => {
      if (!hit.allowed) {
        throw new RateLimitError(`Too many requests from this address: the limit is ${limit} requests per ${windowMs / 60_000} minutes.`, {
          retryAfterSeconds: hit.resetMs / 1000,
          code: 'rate_limit_exceeded',
        });
      }
    });
    if (opts.beforeAuthentication) {
      check.catch(() => undefined); // awaited by the authentication
      ctx.state.ipCheck = check;
    } else {
      await check;
    }
    await next();
  };
}
