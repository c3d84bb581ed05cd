/**
 * Window counters in Redis (`REDIS_URL`): one round trip per hit instead of a Postgres upsert, the same
 * fixed windows (domain/rate-limits.ts), shared by every API process that points at the same Redis.
 *
 * When Redis is unavailable (down, unreachable, or not answering within its command timeout), hits are
 * counted in Postgres instead, never refused for it and never a 500: limits stay enforced and shared
 * across processes (each falls back to the same Postgres counters), at the price of exactness in the
 * window where the store changes: a count started in one store is not seen by the other, so in the
 * window of a switch (to Postgres, and back) a bucket can take up to its limit once more. After a
 * failed command a process keeps to Postgres for `retryAfterMs` before trying Redis again, so a Redis
 * that hangs costs one timeout per process per `retryAfterMs`, not one per request. Redis without
 * persistence forgets its counts on a restart: the windows open then start over.
 */
import type { Logger } from '../core/log';
import type { RedisCounterClient } from '../infra/redis';
import { currentWindow, windowHit, type WindowCounters, type WindowHit } from './rate-limits';

export class RedisWindowCounters implements WindowCounters {
  readonly store = 'redis';
  private avoidUntil = 0;

  constructor(
    private readonly redis: RedisCounterClient,
    private readonly fallback: WindowCounters,
    private readonly opts: { retryAfterMs?: number; log?: Logger } = {},
  ) {}

  async hit(bucket: string, windowMs: number, limit: number, now = Date.now()): Promise<WindowHit> {
    const { start, resetMs } = currentWindow(windowMs, now);
    if (this.redis.ready && Date.now() >= this.avoidUntil) {
      try {
        // Kept one window past its end: a process whose clock lags still finds the window's count.
        const count = await this.redis.increment(`${bucket}:${start}`, resetMs + windowMs);
        return windowHit(count, limit, resetMs);
      } catch (err) {
        this.avoidUntil = Date.now() + (this.opts.retryAfterMs ?? 5000);
        this.opts.log?.warn({ err: (err as Error).message, bucket }, 'Redis window counter failed: counting in Postgres for now');
      }
    }
    return this.fallback.hit(bucket, windowMs, limit, now);
  }
}
