/**
 * The machine's Redis (127.0.0.1:6379, as in CI) for tests of the Redis window counters: each run counts
 * under a key prefix of its own and deletes only its own keys afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh key prefix and the environment that points a gateway's counters at it. */
export function redisCountersEnv(): { REDIS_URL: string; REDIS_KEY_PREFIX: string } {
  return { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: `test-${process.pid}-${randomBytes(4).toString('hex')}:` };
}

/** Deletes the keys under `prefix` (never anyone else's). */
export async function deleteRedisKeys(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** Keys under `prefix` with their remaining time to live in ms. */
export async function redisKeys(prefix: string): Promise<Array<{ key: string; pttl: number; value: string | null }>> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    return await Promise.all(keys.map(async (key) => ({ key, pttl: await redis.pttl(key), value: await redis.get(key) })));
  } finally {
    redis.disconnect();
  }
}
