/**
 * The Redis connection of the window counters (`REDIS_URL`): one counter increment is one round trip
 * (a Lua script: INCR, and PEXPIRE on the window's first hit, atomically, so no counter outlives its
 * window by more than the grace it is given).
 *
 * It never makes a request wait for Redis to come back: commands are refused at once while the
 * connection is down (no offline queue), answered within `commandTimeoutMs` or failed, and never resent
 * after a reconnect (a resent INCR could count a hit twice). The connection itself keeps retrying in the
 * background. What a failed increment means for a limit is the caller's decision (domain/redis-counters.ts).
 */
import { Redis } from 'ioredis';
import type { Logger } from '../core/log';

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

// INCRBY with the same expiry on the key's first increment (tokens per minute of a deployment).
const ADD_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count`;

// A deadline that only moves later: a short cool-down never cuts a longer one short.
const EXTEND_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

export interface RedisCounterClient {
  /** Connected and ready: an increment now is worth trying. */
  readonly ready: boolean;
  /** Adds one to `key` (which expires `ttlMs` after its first increment) and returns the new count. */
  increment(key: string, ttlMs: number): Promise<number>;
  /** Adds `amount` to `key` (expiring `ttlMs` after it was created) and returns the new count. */
  add(key: string, amount: number, ttlMs: number): Promise<number>;
  /** The numbers stored at `keys` (0 where none). */
  numbers(keys: string[]): Promise<number[]>;
  /** Sets `key` to the epoch-ms deadline `untilMs` unless it holds a later one; it expires at its deadline. */
  extendDeadline(key: string, untilMs: number): Promise<void>;
  /** Resolves once connected (true), or after `timeoutMs` without a connection (false). */
  connected(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

type WithIncrement = Redis & {
  gatewayIncrement(key: string, ttlMs: number): Promise<number>;
  gatewayAdd(key: string, ttlMs: number, amount: number): Promise<number>;
  gatewayExtend(key: string, untilMs: number, ttlMs: number): Promise<number>;
};

export function connectRedisCounters(url: string, opts: { keyPrefix: string; commandTimeoutMs?: number; log?: Logger }): RedisCounterClient {
  const redis = new Redis(url, {
    keyPrefix: opts.keyPrefix,
    enableOfflineQueue: false,
    commandTimeout: opts.commandTimeoutMs ?? 1000,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  }) as WithIncrement;
  redis.defineCommand('gatewayIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  redis.defineCommand('gatewayAdd', { numberOfKeys: 1, lua: ADD_SCRIPT });
  redis.defineCommand('gatewayExtend', { numberOfKeys: 1, lua: EXTEND_SCRIPT });
  // Connection errors repeat every retry while Redis is away: say so once per outage, and when it is back.
  let down = false;
  redis.on('error', (err) => {
    if (down) return;
    down = true;
    opts.log?.warn({ err: err.message }, 'Redis (window counters) is unavailable: counting in Postgres until it is back');
  });
  redis.on('ready', () => {
    if (down) opts.log?.info('Redis (window counters) is back');
    down = false;
  });
  return {
    get ready() {
      return redis.status === 'ready';
    },
    increment: (key, ttlMs) => redis.gatewayIncrement(key, Math.max(1, Math.ceil(ttlMs))),
    add: (key, amount, ttlMs) => redis.gatewayAdd(key, Math.max(1, Math.ceil(ttlMs)), Math.round(amount)),
    numbers: async (keys) => (keys.length ? (await redis.mget(...keys)).map((v) => Number(v ?? 0)) : []),
    async extendDeadline(key, untilMs) {
      await redis.gatewayExtend(key, Math.round(untilMs), Math.max(1, Math.ceil(untilMs - Date.now())));
    },
    connected(timeoutMs) {
      if (redis.status === 'ready') return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          redis.off('ready', onReady);
          resolve(ok);
        };
        const onReady = () => done(true);
        const timer = setTimeout(() => done(false), timeoutMs);
        redis.once('ready', onReady);
      });
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
