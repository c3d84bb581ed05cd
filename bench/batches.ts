/**
 * A batch at scale, on the simulated chat model (in-process: no upstream on the wire), against the real stack
 * (its own Temporal dev server with its SQLite file, Postgres, MinIO) and the gateway as `npm start` runs it
 * (API and worker in one process, bench/serve-gateway.ts):
 *
 *   1. the synchronous path: the first SYNC_LINES of those bodies (all LINES unless `--sync-lines` says fewer: a
 *      few thousand measure the per-line cost as well) sent as plain `/v1/chat/completions`, SYNC_CONCURRENCY at a time;
 *   2. the batch: the lines uploaded as one JSONL file (purpose `batch`), `POST /v1/batches`, polled until it ends.
 *
 * For each phase: lines per second, wall time and CPU time (gateway process, Temporal server) per line; for the
 * batch, the overhead per line against the synchronous path, Temporal history events per line (every run of
 * the batch's workflow, continue-as-new included, and of its line workflows, read from Temporal's visibility),
 * and the gateway's resident memory sampled every second from the batch's start to its end (flat or not).
 * Writes bench/results/batches-<time>.json and prints a summary.
 *
 *   npm run build && node dist/bench/batches.js [--lines=10000] [--sync-lines=2000] [--sync-concurrency=16] [--model=sim-chat] [--timeout-s=3600]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../config/env';
import { repoRoot } from '../core/paths';
import { resolveStack } from '../stack';
import { stopAllProcesses } from '../stack/processes';
import { startChild, stopChild } from './children';
import { closedLoop } from './load';
import { cpuMsPerRequest, cpuSnapshot, findPid, memoryMiB } from './proc';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const LINES = Number(args.get('lines') ?? 10_000);
const SYNC_LINES = Math.min(LINES, Number(args.get('sync-lines') ?? LINES));
const SYNC_CONCURRENCY = Number(args.get('sync-concurrency') ?? 16);
const MODEL = args.get('model') ?? 'sim-chat';
const WARMUP = Number(args.get('warmup') ?? 300);
const SAMPLE_MS = 1000;
/** A batch not over by then fails the run (a stuck batch would otherwise poll forever). */
const TIMEOUT_S = Number(args.get('timeout-s') ?? 3600);
/** Statuses after which a batch changes no more (OpenAI's). */
const FINAL = ['failed', 'completed', 'expired', 'cancelled'];

const { GATEWAY_MEMORY_FLAGS, GATEWAY_PRELOAD_FLAGS, GATEWAY_ENV } = require(path.join(repoRoot, 'scripts', 'bootstrap.js')) as {
  GATEWAY_MEMORY_FLAGS: string[]; GATEWAY_PRELOAD_FLAGS: string[]; GATEWAY_ENV: Record<string, string>;
};

const round = (n: number) => Math.round(n * 100) / 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Line `i` as the batch's input has it; its `body` is also what the synchronous phase sends. */
function line(i: number) {
  return { custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Line ${i}: say something short.` }], max_tokens: 32 } };
}

interface Gateway { url: string; key: string; pid: number }

async function call(gw: Gateway, method: string, urlPath: string, body?: unknown): Promise<any> {
  const res = await fetch(`${gw.url}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${gw.key}`, ...(body instanceof FormData || body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

/** Lines 0..n-1 sent as synchronous chat completions, `concurrency` at a time. */
async function synchronous(gw: Gateway, n: number, concurrency: number, temporalPid: number | null) {
  let next = 0;
  let errors = 0;
  const before = cpuSnapshot({ gateway: gw.pid, temporal: temporalPid });
  const elapsedMs = await closedLoop({ concurrency, requests: n }, async () => {
    const i = next++;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: JSON.stringify(line(i).body),
    });
    await res.arrayBuffer();
    if (res.status !== 200) errors++;
  });
  const cpu = cpuMsPerRequest(before, cpuSnapshot({ gateway: gw.pid, temporal: temporalPid }), n);
  return { lines: n, errors, concurrency, elapsed_s: round(elapsedMs / 1000), lines_per_s: round(n / (elapsedMs / 1000)), wall_ms_per_line: round(elapsedMs / n), cpu_ms_per_line: cpu };
}

/** The batch end to end, with the gateway's RSS and the batch's progress sampled every second. */
async function batch(gw: Gateway, n: number, temporalPid: number | null) {
  const jsonl = `${Array.from({ length: n }, (_, i) => JSON.stringify(line(i))).join('\n')}\n`;
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([jsonl], { type: 'application/jsonl' }), 'bench.jsonl');
  const uploadStart = performance.now();
  const file = await call(gw, 'POST', '/v1/files', form);
  const uploadMs = performance.now() - uploadStart;

  const samples: Array<{ t_s: number; rss_mib: number; done: number; status: string }> = [];
  const before = cpuSnapshot({ gateway: gw.pid, temporal: temporalPid });
  const started = performance.now();
  let object = await call(gw, 'POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { bench: 'batches' } });
  let runningAt: number | null = null;
  for (;;) {
    const mem = memoryMiB(gw.pid);
    const t = performance.now() - started;
    samples.push({ t_s: round(t / 1000), rss_mib: mem?.rssMiB ?? NaN, done: object.request_counts.completed + object.request_counts.failed, status: object.status });
    if (runningAt === null && object.status !== 'validating') runningAt = t;
    if (FINAL.includes(object.status)) break;
    if (t > TIMEOUT_S * 1000) throw new Error(`batch ${object.id} still ${object.status} after ${TIMEOUT_S} s (${JSON.stringify(object.request_counts)})`);
    await sleep(SAMPLE_MS);
    object = await call(gw, 'GET', `/v1/batches/${object.id}`);
  }
  const elapsedMs = performance.now() - started;
  const cpu = cpuMsPerRequest(before, cpuSnapshot({ gateway: gw.pid, temporal: temporalPid }), n);
  const runMs = elapsedMs - (runningAt ?? 0);
  return {
    id: object.id, status: object.status, request_counts: object.request_counts, credits_used: object.credits_used ?? null, usage: object.usage ?? null,
    upload_s: round(uploadMs / 1000), input_bytes: Buffer.byteLength(jsonl),
    elapsed_s: round(elapsedMs / 1000),
    // Validation (reading and checking the file, storing its lines) as the poll saw it, then the lines' run.
    validating_s: round((runningAt ?? elapsedMs) / 1000),
    lines_per_s: round(n / (elapsedMs / 1000)),
    lines_per_s_after_validation: round(n / (runMs / 1000)),
    wall_ms_per_line: round(elapsedMs / n),
    cpu_ms_per_line: cpu,
    samples,
  };
}

/** Every run of the batch's workflow (continue-as-new included) and of its line workflows, with their history lengths. */
async function historyEvents(address: string, namespace: string, batchId: string) {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace });
    const count = async (type: string) => {
      let runs = 0;
      let events = 0;
      let open = 0;
      let largestRun = 0;
      for await (const w of client.workflow.list({ query: `WorkflowType = '${type}'` })) {
        if (!w.workflowId.startsWith(`batch-${batchId}`)) continue;
        runs++;
        if (w.status.name === 'RUNNING') open++;
        events += w.historyLength;
        largestRun = Math.max(largestRun, w.historyLength);
      }
      // The largest run's history against Temporal's limits (50,000 events; it warns from 10,240).
      return { runs, events, open, largest_run_events: largestRun };
    };
    return { batch: await count('batchWorkflow'), lines: await count('batchLineWorkflow') };
  } finally {
    await connection.close();
  }
}

/** Resident memory over the run: first and last quarter's means, the peak, and the least-squares slope. */
function memoryTrend(all: Array<{ t_s: number; rss_mib: number; done: number }>) {
  const samples = all.filter((s) => Number.isFinite(s.rss_mib));
  const rss = samples.map((s) => s.rss_mib);
  const quarter = Math.max(1, Math.floor(rss.length / 4));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const xs = samples.map((s) => s.done);
  const mx = mean(xs);
  const my = mean(rss);
  const slope = xs.reduce((a, x, i) => a + (x - mx) * (rss[i] - my), 0) / (xs.reduce((a, x) => a + (x - mx) ** 2, 0) || 1);
  const first = mean(rss.slice(0, quarter));
  const last = mean(rss.slice(-quarter));
  return {
    start_mib: rss[0], end_mib: rss[rss.length - 1], peak_mib: Math.max(...rss),
    first_quarter_mean_mib: round(first), last_quarter_mean_mib: round(last),
    mib_per_1000_lines: round(slope * 1000),
    // Flat: the last quarter within 10% (or 20 MiB) of the first, so memory does not grow with the lines done.
    flat: last - first <= Math.max(20, first * 0.1),
  };
}

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, S3_ENDPOINT: undefined });
  const stack = await resolveStack(config, { mode: 'test', dbName: `gateway_bench_batches_${process.pid}`, persistTemporal: true, dropDatabase: true });
  const temporalPid = findPid(['start-dev', stack.temporalAddress.split(':')[1]]);
  const results: Record<string, any> = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: os.loadavg().map(round) },
    settings: { lines: LINES, syncLines: SYNC_LINES, syncConcurrency: SYNC_CONCURRENCY, model: MODEL, warmup: WARMUP, sampleMs: SAMPLE_MS },
  };
  try {
    const child = await startChild('bench/serve-gateway.js', {
      ...GATEWAY_ENV,
      PORT: '0', LOG_LEVEL: 'warn', IP_RATE_LIMIT: '1000000000',
      DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress,
      S3_ENDPOINT: stack.s3.endpoint, S3_ACCESS_KEY_ID: stack.s3.accessKeyId, S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey, S3_BUCKET: stack.s3.bucket,
    }, [...GATEWAY_MEMORY_FLAGS, ...GATEWAY_PRELOAD_FLAGS]);
    const gw: Gateway = { url: child.info.url, key: child.info.key, pid: child.child.pid! };
    try {
      results.rss_at_ready_mib = memoryMiB(gw.pid)?.rssMiB;
      await synchronous(gw, WARMUP, 4, temporalPid);
      results.synchronous = await synchronous(gw, SYNC_LINES, SYNC_CONCURRENCY, temporalPid);
      console.log('synchronous', JSON.stringify(results.synchronous));
      const b = await batch(gw, LINES, temporalPid);
      const { samples, ...rest } = b;
      results.batch = rest;
      results.batch_memory = memoryTrend(samples);
      results.batch_samples = samples;
      console.log('batch', JSON.stringify(rest), JSON.stringify(results.batch_memory));
      const history = await historyEvents(stack.temporalAddress, config.temporalNamespace, b.id);
      results.history = {
        ...history,
        batch_events_per_line: round(history.batch.events / LINES),
        line_events_per_line: round(history.lines.events / LINES),
        events_per_line: round((history.batch.events + history.lines.events) / LINES),
      };
      results.overhead_per_line = {
        wall_ms: round(b.wall_ms_per_line - results.synchronous.wall_ms_per_line),
        gateway_cpu_ms: round(b.cpu_ms_per_line.gateway - results.synchronous.cpu_ms_per_line.gateway),
        temporal_cpu_ms: round(b.cpu_ms_per_line.temporal - results.synchronous.cpu_ms_per_line.temporal),
      };
      results.loadAverageAtEnd = os.loadavg().map(round);
    } finally {
      await stopChild(child.child);
    }
  } finally {
    await stack.stop();
    await stopAllProcesses();
  }
  const out = path.join(repoRoot, 'bench', 'results', `batches-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  const s = results.synchronous;
  const b = results.batch;
  console.log(`
| ${LINES} lines on ${MODEL} | lines/s | wall ms/line | gateway CPU ms/line | Temporal CPU ms/line |
| --- | ---: | ---: | ---: | ---: |
| synchronous (${s.lines} lines), ${SYNC_CONCURRENCY} at a time | ${s.lines_per_s} | ${s.wall_ms_per_line} | ${s.cpu_ms_per_line.gateway} | ${s.cpu_ms_per_line.temporal} |
| batch (${b.status}, ${b.request_counts.completed}/${b.request_counts.failed}/${b.request_counts.total}) | ${b.lines_per_s} (${b.lines_per_s_after_validation} after ${b.validating_s} s validating) | ${b.wall_ms_per_line} | ${b.cpu_ms_per_line.gateway} | ${b.cpu_ms_per_line.temporal} |

history events per line: ${results.history.events_per_line} (batch runs ${results.history.batch.runs}: ${results.history.batch_events_per_line}/line, largest ${results.history.batch.largest_run_events} events; line runs ${results.history.lines.runs}: ${results.history.line_events_per_line}/line)
gateway RSS over the batch: ${results.batch_memory.start_mib} -> ${results.batch_memory.end_mib} MiB (peak ${results.batch_memory.peak_mib}, ${results.batch_memory.mib_per_1000_lines} MiB per 1,000 lines): ${results.batch_memory.flat ? 'flat' : 'NOT flat'}
[bench] wrote ${path.relative(process.cwd(), out)}`);
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
