/**
 * What each step before a chat request's workflow starts costs (issue 14, cheaper admission): the steps
 * of `POST /v1/chat/completions` run one after another as the API runs them (the same middleware and
 * functions, on a stand-in Koa context), against the real Postgres and, with `--counters=redis`, the real
 * Redis. Per step: its round trips to Postgres and Redis, its time at concurrency 1 and, with 64 of these
 * sequences in closed loops on a pool of 20 connections (the API's), its mean time and share of the
 * sequence; plus the CPU per sequence of this process, of its Postgres backends and of Redis.
 *
 *   node dist/bench/admission-steps.js [--counters=postgres|postgres-sync|redis] [--serial=2000] [--duration-ms=5000]
 *
 * `postgres`: counters as the gateway keeps them without Redis (a pool of their own, commits not waiting
 * for the WAL flush); `postgres-sync`: on the main pool, every commit flushed (as before that pool).
 *
 * DATABASE_URL (default: a `bench_admission` database on the machine's Postgres), REDIS_URL (default
 * redis://127.0.0.1:6379). Its counters and rows are its own (a fresh workspace and key, a key prefix).
 */
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { createDb } from '../db/connection';
import { prepareDatabase } from '../domain/database-setup';
import { ModelCatalog } from '../domain/model-catalog';
import { createApiKey, createWorkspace, getFallbackChain } from '../domain/workspaces';
import { PostgresWindowCounters, type WindowCounters } from '../domain/rate-limits';
import { RedisWindowCounters } from '../domain/redis-counters';
import { connectRedisCounters } from '../infra/redis';
import { ensurePostgres } from '../stack/postgres';
import { authMiddleware } from '../api/http/auth';
import { keyQuotaMiddleware } from '../api/http/key-quotas';
import { readJsonBody } from '../api/http/body';
import { checkRequestedModel } from '../api/requests/run';
import { validateChatCompletionBody } from '../endpoints/chat/body';
import { canonicalJson, claimIdempotencyKey, sha256 } from '../domain/idempotency';
import { IDEMPOTENT_REQUEST_PREFIX } from '../workflows/contracts';
import type { AppDeps, GatewayContext } from '../api/http/context';
import { closedLoop, percentile } from './load';
import { cpuSeconds, findPid } from './proc';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const COUNTERS = args.get('counters') ?? 'postgres';
const SERIAL = Number(args.get('serial') ?? 2000);
const DURATION_MS = Number(args.get('duration-ms') ?? 5000);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const APP = `admission-bench-${process.pid}`;
const BODY = Buffer.from(JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] }));

/** `optional`: not on every request's path (left out of the shares). */
type Step = { name: string; optional?: boolean; run: (ctx: FakeContext) => Promise<void> };
type FakeContext = GatewayContext & { headers: Record<string, string> };

async function main(): Promise<void> {
  const pg = await ensurePostgres({ databaseUrl: process.env.DATABASE_URL, dbName: 'bench_admission', dataDir: '/tmp' });
  const db = createDb(pg.url, { poolMax: 20, applicationName: APP });
  await prepareDatabase(db);
  const countersDb = COUNTERS === 'postgres-sync' ? db : createDb(pg.url, { poolMax: 8, applicationName: APP, settings: { synchronous_commit: 'off' } });
  const postgres = new PostgresWindowCounters(countersDb);
  const redis = COUNTERS === 'redis' ? connectRedisCounters(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: `admission-bench:${randomBytes(4).toString('hex')}:` }) : null;
  if (redis && !(await redis.connected(3000))) throw new Error('Redis did not answer');
  const counters: WindowCounters = redis ? new RedisWindowCounters(redis, postgres) : postgres;

  const ws = await createWorkspace(db, { name: 'admission-bench', credits: 1000, actor: 'bench' });
  // A key as on a plan: a requests-per-minute window and a daily token cap, both far above this run.
  const key = await createApiKey(db, { workspaceId: ws.id, name: 'bench', role: 'owner', quotas: { rpm: 1e9, dailyTokens: 1e12 }, actor: 'bench' });
  const catalog = new ModelCatalog(db);
  await catalog.reload();
  const deps = { db, catalog } as unknown as AppDeps;

  let redisCalls = 0;
  const countingCounters: WindowCounters = {
    store: counters.store,
    hit: (...a) => { if (counters.store === 'redis') redisCalls++; return counters.hit(...a); },
  };
  // As the API composes them (api/app.ts): the authentication counts the per-IP net and, with the counters
  // in Postgres, the key's rpm window in the key lookup's statement (api/http/key-lookup.ts).
  const auth = authMiddleware(db, { ipNet: { counters: counters.store === 'postgres' ? counters : countingCounters, limit: 1e9 }, reachesKeyQuotas: () => true });
  const quotas = keyQuotaMiddleware(countingCounters);
  const none = async () => undefined;
  const steps: Step[] = [
    { name: 'auth with the per-IP net (Postgres counters: and the rpm window, one statement)', run: (ctx) => auth(ctx as unknown as Koa.Context, none) },
    { name: 'key quotas (rpm window unless counted above; daily tokens)', run: (ctx) => quotas(ctx as never, none) },
    { name: 'body: read, parse, validate', run: async (ctx) => { ctx.state.body = validateChatCompletionBody(await readJsonBody(ctx, 25 * 1024 * 1024)); } },
    { name: 'model check (catalog, in memory)', run: async (ctx) => { await checkRequestedModel(ctx, deps, 'chat.completions', 'sim-chat', ctx.state.body); } },
    // A key's request has its chain from the key lookup; a member's session reads it so.
    { name: 'fallback chain lookup (sessions only)', optional: true, run: async () => { await getFallbackChain(db, ws.id, 'sim-chat'); } },
    {
      name: 'idempotency claim (only with Idempotency-Key)',
      optional: true,
      run: async (ctx) => {
        await claimIdempotencyKey(db, { workspaceId: ws.id, scope: 'chat.completions', key: randomBytes(8).toString('hex'), bodyHash: sha256(canonicalJson(ctx.state.body)), prefix: IDEMPOTENT_REQUEST_PREFIX });
      },
    },
  ];

  // Every statement sent on a pool's connections, knex's own and the prepared ones (db/prepared.ts).
  let queries = 0;
  const counted = new WeakSet<object>();
  for (const pool of new Set([db, countersDb])) {
    const acquire = pool.client.acquireConnection.bind(pool.client);
    pool.client.acquireConnection = async () => {
      const connection = await acquire();
      if (!counted.has(connection)) {
        counted.add(connection);
        const query = connection.query.bind(connection);
        connection.query = (...a: unknown[]) => { queries++; return query(...a); };
      }
      return connection;
    };
  }
  const context = (): FakeContext => {
    const headers: Record<string, string> = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', 'content-length': String(BODY.length) };
    return {
      ip: '203.0.113.7', path: '/v1/chat/completions', method: 'POST', headers, state: { requestId: 'x', startedAt: 0 },
      get: (h: string) => headers[h.toLowerCase()] ?? '', set: () => undefined, req: Readable.from([BODY]),
    } as unknown as FakeContext;
  };
  const runSequence = async (times: number[][], trips?: Array<{ pg: number; redis: number }>) => {
    const ctx = context();
    for (const [i, step] of steps.entries()) {
      const [q, r] = [queries, redisCalls];
      const t = performance.now();
      await step.run(ctx);
      times[i].push(performance.now() - t);
      if (trips) trips[i] = { pg: trips[i].pg + queries - q, redis: trips[i].redis + redisCalls - r };
    }
  };

  // Warm up (connections, JIT), then concurrency 1.
  const warm = steps.map(() => [] as number[]);
  for (let i = 0; i < 200; i++) await runSequence(warm);
  const serial = steps.map(() => [] as number[]);
  const trips = steps.map(() => ({ pg: 0, redis: 0 }));
  for (let i = 0; i < SERIAL; i++) await runSequence(serial, trips);

  // Concurrency 64 (after a warm-up that opens the whole pool): this process's CPU, its Postgres
  // backends' (by application_name) and Redis's.
  await closedLoop({ concurrency: CONCURRENCY, durationMs: 1000 }, () => runSequence(steps.map(() => [] as number[])));
  const backends = (await db.raw('select pid from pg_stat_activity where application_name = ?', [APP])).rows.map((r: { pid: number }) => r.pid);
  const redisPid = redis ? findPid(['redis-server 127.0.0.1:6379']) : null;
  const cpu = () => ({ self: process.cpuUsage(), pg: backends.reduce((s: number, pid: number) => s + (cpuSeconds(pid) || 0), 0), redis: redisPid ? cpuSeconds(redisPid) : NaN });
  const concurrent = steps.map(() => [] as number[]);
  const before = cpu();
  let sequences = 0;
  const elapsed = await closedLoop({ concurrency: CONCURRENCY, durationMs: DURATION_MS }, async () => { await runSequence(concurrent); sequences++; });
  const after = cpu();
  const selfMs = ((after.self.user - before.self.user) + (after.self.system - before.self.system)) / 1000;
  const moreBackends = (await db.raw('select count(*)::int as n from pg_stat_activity where application_name = ?', [APP])).rows[0].n;

  const round = (n: number) => Math.round(n * 1000) / 1000;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sumOfMeans = concurrent.reduce((s, xs, i) => s + (steps[i].optional ? 0 : mean(xs)), 0);
  console.log(`\ncounters: ${COUNTERS}; ${SERIAL} serial sequences, then ${sequences} at concurrency ${CONCURRENCY} in ${Math.round(elapsed)} ms (${round(sequences / elapsed * 1000)} sequences/s)\n`);
  console.log('| step | Postgres round trips | Redis round trips | p50 @1 | mean @1 | mean @64 | share @64 |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [i, step] of steps.entries()) {
    const m = mean(concurrent[i]);
    console.log(`| ${step.name} | ${round(trips[i].pg / SERIAL)} | ${round(trips[i].redis / SERIAL)} | ${round(percentile(serial[i], 50))} ms | ${round(mean(serial[i]))} ms | ${round(m)} ms | ${step.optional ? '(not in the sum)' : `${Math.round((m / sumOfMeans) * 100)}%`} |`);
  }
  console.log(`\nCPU per sequence @${CONCURRENCY}: this process ${round(selfMs / sequences)} ms, its Postgres backends ${round((after.pg - before.pg) * 1000 / sequences)} ms`
    + `${redisPid ? `, Redis ${round((after.redis - before.redis) * 1000 / sequences)} ms` : ''}${moreBackends > backends.length ? ' (backends opened during the run are not counted)' : ''}`);

  await db('api_keys').where({ id: key.id }).update({ revoked_at: db.fn.now() });
  await redis?.close();
  if (countersDb !== db) await countersDb.destroy();
  await db.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
