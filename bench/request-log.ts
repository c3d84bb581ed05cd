/**
 * The request log at scale: a workspace with 1,000,000 usage records (30 days, 40 keys of 8 members, 12 models,
 * 5 endpoints, 3% failed, a tenth from the Playground) in a database of its own on the machine's Postgres, then
 * each filtered first page and a deep page timed through the same function the API runs (`requestLogPage`),
 * 40 times each, with Postgres's own EXPLAIN ANALYZE of one run. Prints a table and writes
 * bench/results/request-log-<time>.json.
 *
 *   node dist/bench/request-log.js [--rows=1000000] [--runs=40] [--keep]
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knex from 'knex';
import { createDb } from '../db/connection';
import { prepareDatabase } from '../domain/database-setup';
import { parseRequestLogQuery, requestLogPage, type RequestLogScope } from '../domain/request-log';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const ROWS = Number(args.rows ?? 1_000_000);
const RUNS = Number(args.runs ?? 40);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WORKSPACE = 'ws_bench_log';

async function main(): Promise<void> {
  const name = `bench_request_log_${Date.now()}`;
  const admin = knex({ client: 'pg', connection: ADMIN_URL });
  await admin.raw(`create database ${name}`);
  const url = ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);
  const db = createDb(url, { poolMax: 4, applicationName: 'bench-request-log' });
  try {
    await prepareDatabase(db);
    const seeded = performance.now();
    await seed(db);
    console.log(`[bench] seeded ${ROWS} usage records in ${Math.round((performance.now() - seeded) / 1000)} s`);

    const now = Math.floor(Date.now() / 1000);
    const cases: Array<{ name: string; query: Record<string, string>; onlyUserId?: string }> = [
      { name: 'newest page (no filter)', query: {} },
      { name: 'last 24 h', query: { start_time: String(now - 86_400) } },
      { name: 'a day 20 days ago', query: { start_time: String(now - 20 * 86_400), end_time: String(now - 19 * 86_400) } },
      { name: 'one model', query: { model: 'model-7' } },
      { name: 'one key', query: { api_key_id: 'key_bench_13' } },
      { name: 'one member', query: { user_id: 'usr_bench_3' } },
      { name: 'failed only', query: { status: 'failed' } },
      { name: 'endpoint embeddings', query: { endpoint: 'embeddings' } },
      { name: 'min cost 0.05', query: { min_credits: '0.05' } },
      { name: 'failed, one model, 7 days', query: { status: 'failed', model: 'model-3', start_time: String(now - 7 * 86_400) } },
      { name: 'by request id', query: { request_id: 'req_bench_777777' } },
      { name: 'by client X-Request-Id', query: { request_id: 'client_bench_123456' } },
      { name: 'developer scope (own keys)', query: {}, onlyUserId: 'usr_bench_5' },
    ];
    const results = [];
    for (const c of cases) {
      const scope: RequestLogScope = { workspaceId: WORKSPACE, onlyUserId: c.onlyUserId ?? null };
      const q = parseRequestLogQuery(c.query);
      const first = await requestLogPage(db, scope, q);
      // The 20th page, through cursors, as a person paging back would reach it.
      let deep = q;
      for (let i = 0; i < 19 && first.hasMore; i++) {
        const page = await requestLogPage(db, scope, deep);
        if (!page.hasMore) break;
        deep = { ...deep, after: page.data[page.data.length - 1].id };
      }
      const times: number[] = [];
      const deepTimes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        let t = performance.now();
        await requestLogPage(db, scope, q);
        times.push(performance.now() - t);
        t = performance.now();
        await requestLogPage(db, scope, deep);
        deepTimes.push(performance.now() - t);
      }
      const plan = await explain(db, scope, q);
      results.push({ name: c.name, rows: first.data.length, p50_ms: pct(times, 50), p95_ms: pct(times, 95), deep_p95_ms: pct(deepTimes, 95), plan_ms: plan.ms, plan_top: plan.top });
      console.log(`${c.name.padEnd(30)} rows ${String(first.data.length).padStart(3)}  p50 ${pct(times, 50).toFixed(1).padStart(6)} ms  p95 ${pct(times, 95).toFixed(1).padStart(6)} ms  page 20 p95 ${pct(deepTimes, 95).toFixed(1).padStart(6)} ms  EXPLAIN ${plan.ms.toFixed(1)} ms: ${plan.top}`);
    }
    const out = path.join(__dirname, '..', '..', 'bench', 'results', `request-log-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    fs.writeFileSync(out, JSON.stringify({ rows: ROWS, runs: RUNS, results }, null, 2));
    console.log(`[bench] wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await db.destroy();
    if (args.keep !== 'true') await admin.raw(`drop database ${name} with (force)`);
    await admin.destroy();
  }
}

/** One workspace, 8 members with 5 keys each, and ROWS usage records spread over 30 days, in one statement. */
async function seed(db: ReturnType<typeof createDb>): Promise<void> {
  await db.raw(`insert into workspaces (id, name) values (?, 'Bench log')`, [WORKSPACE]);
  await db.raw(`insert into users (id, email, name, password_hash) select 'usr_bench_' || i, 'member' || i || '@bench.example', 'Member ' || i, 'x' from generate_series(0, 7) i`);
  await db.raw(`insert into api_keys (id, workspace_id, name, prefix, key_hash, last4, created_by_user_id)
                select 'key_bench_' || i, ?, 'Key ' || i, 'sk-', 'hash' || i, '0000', 'usr_bench_' || (i % 8) from generate_series(0, 39) i`, [WORKSPACE]);
  await db.raw(`
    insert into usage_records (request_id, workspace_id, api_key_id, user_id, endpoint, model_requested, model_used, fallback_depth, status,
                               input_tokens, output_tokens, credits_micro, client_request_id, error_code, latency_ms, created_at)
    select 'req_bench_' || i, ?,
           case when i % 10 = 0 then null else 'key_bench_' || (i % 40) end,
           case when i % 10 = 0 then 'usr_bench_' || (i % 8) else null end,
           (array['chat.completions','chat.completions','responses','embeddings','images'])[1 + i % 5],
           'model-' || (i % 12), 'model-' || ((i + (i % 17 = 0)::int) % 12), (i % 17 = 0)::int,
           case when i % 33 = 0 then 'failed' else 'succeeded' end,
           100 + i % 900, 50 + i % 400, (i % 1000) * 100,
           case when i % 3 = 0 then 'client_bench_' || i else null end,
           case when i % 33 = 0 then 'upstream_error' else null end,
           200 + i % 3000,
           now() - make_interval(secs => (? - i) * (30.0 * 86400 / ?))
      from generate_series(1, ?) i`, [WORKSPACE, ROWS, ROWS, ROWS]);
  await db.raw('analyze usage_records');
}

async function explain(db: ReturnType<typeof createDb>, scope: RequestLogScope, q: ReturnType<typeof parseRequestLogQuery>): Promise<{ ms: number; top: string }> {
  let captured: { sql: string; bindings: unknown[] } | null = null;
  const listener = (data: { sql: string; bindings: unknown[] }) => { if (/from "usage_records" as "r"/.test(data.sql)) captured ??= data; };
  db.on('query', listener);
  await requestLogPage(db, scope, q);
  db.removeListener('query', listener);
  // The statement as the driver sent it ($1 placeholders), run again under EXPLAIN on one connection.
  const connection = await db.client.acquireConnection();
  let rows: any[];
  try {
    ({ rows } = await connection.query(`explain (analyze, format json) ${captured!.sql}`, captured!.bindings));
  } finally {
    await db.client.releaseConnection(connection);
  }
  const plan = rows[0]['QUERY PLAN'][0];
  const nodes: string[] = [];
  const walk = (n: any) => { if (n['Index Name'] || /Seq Scan/.test(n['Node Type'])) nodes.push(`${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`); (n.Plans ?? []).forEach(walk); };
  walk(plan.Plan);
  return { ms: plan['Execution Time'], top: [...new Set(nodes)].join(', ') };
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
