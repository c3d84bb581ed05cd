/**
 * Per-key quotas on model endpoints, shared by every API process: requests per minute (a window counter,
 * in Postgres or Redis; 429 with Retry-After and x-ratelimit-* headers) and the daily token cap (today's
 * count read with the key at authentication; 429 until midnight UTC, with x-should-retry: false so
 * official clients do not retry in vain). Allowed models and the cost cap are
 * checked where the model and the price are known (route and reservation).
 */
import type Koa from 'koa';
import { RateLimitError } from '../../core/errors';
import type { WindowCounters } from '../../domain/rate-limits';
import type { GatewayState } from './context';
import { KEY_RPM_WINDOW_MS, keyRpmBucket } from './key-lookup';

export function secondsUntilUtcMidnight(now = new Date()): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

export function keyQuotaMiddleware(counters: WindowCounters): Koa.Middleware<GatewayState> {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (auth.rpmLimit) {
      // Counted with the key lookup when the counters are in Postgres (api/http/auth.ts).
      const hit = ctx.state.rpmHit ?? await counters.hit(keyRpmBucket(auth.keyId), KEY_RPM_WINDOW_MS, auth.rpmLimit);
      const reset = `${Math.max(1, Math.ceil(hit.resetMs / 1000))}s`;
      ctx.set('x-ratelimit-limit-requests', String(hit.limit));
      ctx.set('x-ratelimit-remaining-requests', String(hit.remaining));
      ctx.set('x-ratelimit-reset-requests', reset);
      if (!hit.allowed) {
        throw new RateLimitError(`Rate limit reached: this key allows ${hit.limit} requests per minute. Retry after ${reset}.`, {
          retryAfterSeconds: hit.resetMs / 1000,
        });
      }
    }
    if (auth.dailyTokenLimit) {
      const used = auth.tokensUsedToday;
      ctx.set('x-ratelimit-limit-tokens-day', String(auth.dailyTokenLimit));
      ctx.set('x-ratelimit-remaining-tokens-day', String(Math.max(0, auth.dailyTokenLimit - used)));
      if (used >= auth.dailyTokenLimit) {
        throw new RateLimitError('Daily token cap reached', { retryAfterSeconds: secondsUntilUtcMidnight(), shouldRetry: false });
      }
    }
    await next();
  };
}
