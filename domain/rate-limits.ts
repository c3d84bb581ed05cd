/**
 * Fixed-window counters shared by every API process: the per-IP safety net, each key's requests per
 * minute and the sign-in throttles all count through one `WindowCounters`, chosen once in the wiring
 * (main/runtime.ts): Postgres by default (one upsert per hit), Redis when `REDIS_URL` is set (one
 * round trip per hit: domain/redis-counters.ts). Both count the same windows: the window of a hit is
 * `floor(now / windowMs)`, so every process agrees on where a window starts and ends.
 */
import { preparedRows } from '../db/prepared';
import type { Knex } from 'knex';

export interface WindowHit {
  count: number;
  limit: number;
  allowed: boolean;
  remaining: number;
  /** Milliseconds until this window ends and the count starts over. */
  resetMs: number;
}

export interface WindowCounters {
  /** Where the counts live (the bench and /metrics say which). */
  readonly store: 'postgres' | 'redis';
  /** Counts one hit in `bucket`'s current window of `windowMs` and says whether it is within `limit`. */
  hit(bucket: string, windowMs: number, limit: number, now?: number): Promise<WindowHit>;
}

/** The window `now` falls in: its start (the counter's name) and the time left in it. */
export function currentWindow(windowMs: number, now: number): { start: number; resetMs: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, resetMs: start + windowMs - now };
}

export function windowHit(count: number, limit: number, resetMs: number): WindowHit {
  return { count, limit, allowed: count <= limit, remaining: Math.max(0, limit - count), resetMs };
}

/**
 * The upsert that counts a hit and returns the window's count; `source` gives its (bucket, window start, 1)
 * row: `values (?, ?, 1)`, or a select (api/http/key-lookup.ts counts a key's hit in its lookup's statement).
 */
export function windowUpsertSql(source: string): string {
  return `insert into rate_limit_counters (bucket, window_start, count) ${source}
     on conflict (bucket, window_start) do update set count = rate_limit_counters.count + 1
     returning count`;
}

/** One statement per hit: an upsert that increments and returns the window's count. */
export async function hitWindow(db: Knex, bucket: string, windowMs: number, limit: number, now = Date.now()): Promise<WindowHit> {
  const { start, resetMs } = currentWindow(windowMs, now);
  const rows = await preparedRows<{ count: number }>(db, db.raw(windowUpsertSql('values (?, ?, 1)'), [bucket, start]));
  return windowHit(Number(rows[0].count), limit, resetMs);
}

/** Drops windows that ended long ago (called now and then, not per request). */
export async function pruneWindows(db: Knex, olderThanMs = 24 * 3600_000, now = Date.now()): Promise<number> {
  return db('rate_limit_counters').where('window_start', '<', now - olderThanMs).delete();
}

/** The default store: counts in Postgres, old windows pruned at most once an hour per process. */
export class PostgresWindowCounters implements WindowCounters {
  readonly store = 'postgres';
  private lastPrune = 0;

  /** `db`: the counters' pool (the key lookup counts its hits in the same statement there: api/http/key-lookup.ts). */
  constructor(readonly db: Knex) {}

  async hit(bucket: string, windowMs: number, limit: number, now = Date.now()): Promise<WindowHit> {
    const hit = await hitWindow(this.db, bucket, windowMs, limit, now);
    if (now - this.lastPrune > 3600_000) {
      this.lastPrune = now;
      void pruneWindows(this.db, 24 * 3600_000, now).catch(() => undefined);
    }
    return hit;
  }
}
