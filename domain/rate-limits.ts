/**
 * Fixed-window counters in Postgres, so every API process shares one count per key or IP. One statement
 * per check: an upsert that increments and returns the window's count.
 */
import type { Knex } from 'knex';

export interface WindowHit {
  count: number;
  limit: number;
  allowed: boolean;
  remaining: number;
  /** Milliseconds until this window ends and the count starts over. */
  resetMs: number;
}

export async function hitWindow(db: Knex, bucket: string, windowMs: number, limit: number, now = Date.now()): Promise<WindowHit> {
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const { rows } = await db.raw(
    `insert into rate_limit_counters (bucket, window_start, count) values (?, ?, 1)
     on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
     returning count`,
    [bucket, windowStart],
  );
  const count = Number(rows[0].count);
  return { count, limit, allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs: windowStart + windowMs - now };
}

/** Drops windows that ended long ago (called now and then, not per request). */
export async function pruneWindows(db: Knex, olderThanMs = 24 * 3600_000, now = Date.now()): Promise<number> {
  return db('rate_limit_counters').where('window_start', '<', now - olderThanMs).delete();
}
