/**
 * `npm run bench`: the gateway's own overhead, measured against a fake upstream on loopback with the real
 * stack (Temporal dev server with its SQLite file, Postgres, MinIO), beside the floor of that stack (an empty
 * eager-started workflow, and one with a single local activity: bench/floor.ts) and optionally a peer. For
 * each gateway variant: added latency at concurrency 1 (p50/p99 vs calling the upstream directly),
 * throughput, p99 and peak RSS at concurrency 64, the added time to first token of a stream, each also as
 * a ratio of (or margin over) the floor; for the default variant, overload at 4x that concurrency. Results
 * go to bench/results/<timestamp>.json, and a summary (bench/report.ts) to stdout.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/env';
import { repoRoot } from '../core/paths';
import { resolveStack } from '../stack';
import { freePort, stopAllProcesses } from '../stack/processes';
import { percentile, runLoad, type LoadResult } from './load';
import { markdownReport } from './report';
import { cpuMsPerRequest, cpuSnapshot, findPid, memoryMiB, resetPeakRss } from './proc';
import { startChild, stopChild } from './children';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const SERIAL_REQUESTS = Number(args.get('serial') ?? 1000);
const CONCURRENT_MS = Number(args.get('duration-ms') ?? 20_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const STREAM_REQUESTS = Number(args.get('stream') ?? 300);
/** A pause between the requests of the concurrency-1 phases (floor included): 0 sends the next at once. */
const SERIAL_PAUSE_MS = Number(args.get('pause-ms') ?? 0);
/** Overload: the default variant at 4x the concurrency, clients waiting out Retry-After as official ones do. */
const OVERLOAD_CONCURRENCY = Number(args.get('overload-concurrency') ?? CONCURRENCY * 4);
const OVERLOAD_MS = Number(args.get('overload-ms') ?? CONCURRENT_MS);
const FLOOR = args.get('floor') !== 'false';

/** Gateway variants: each runs in a fresh process with these extra environment variables. */
const VARIANT_NAMES = (args.get('variants') ?? 'default,metrics-off,tracing').split(',').filter(Boolean);

function variantEnv(name: string, mockUrl: string): Record<string, string> {
  switch (name) {
    case 'default': case 'untuned': case 'sandbox-as-shipped': return {};
    case 'metrics-off': return { METRICS_ENABLED: 'false' };
    // Spans exported over OTLP/HTTP to the mock, which swallows them.
    case 'tracing': return { OTEL_EXPORTER_OTLP_ENDPOINT: mockUrl };
    case 'remote-activities': return { GATEWAY_ACTIVITY_MODE: 'remote' };
    case 'no-eager-start': return { GATEWAY_EAGER_START: 'false' };
    case 'history-results': return { GATEWAY_INPROCESS_RESULTS: 'false' };
    // The first hop waits for its run's activity instead of holding and calling while the run starts.
    case 'no-first-hop': return { GATEWAY_FIRST_HOP_AHEAD: 'false' };
    case 'baseline': return { GATEWAY_ACTIVITY_MODE: 'remote', GATEWAY_EAGER_START: 'false', GATEWAY_INPROCESS_RESULTS: 'false' };
    // Window counters (per-IP net, per-key rpm) in the machine's Redis, under a prefix of this run (the keys expire by themselves).
    case 'redis-counters': return { REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: `bench-${process.pid}-${Date.now()}:` };
    // A task queue of its own: the worker runs a second Worker (and workflow thread) for scheduled work.
    case 'own-queue': return { TEMPORAL_TASK_QUEUE: `bench-own-queue-${process.pid}` };
    default: throw new Error(`unknown variant ${name}`);
  }
}

/**
 * The gateway's process settings, as `npm start` runs it: memory (Node flags, allocator; `untuned` runs
 * without them) and the sandbox preload (worker/sandbox-preload.ts; `sandbox-as-shipped` runs without it).
 */
const { GATEWAY_MEMORY_FLAGS, GATEWAY_PRELOAD_FLAGS, GATEWAY_ENV } = require(path.join(repoRoot, 'scripts', 'bootstrap.js')) as {
  GATEWAY_MEMORY_FLAGS: string[]; GATEWAY_PRELOAD_FLAGS: string[]; GATEWAY_ENV: Record<string, string>;
};
const tuned = (name: string) => name !== 'untuned';
const nodeFlags = (name: string) => [...(tuned(name) ? GATEWAY_MEMORY_FLAGS : []), ...(name === 'sandbox-as-shipped' ? [] : GATEWAY_PRELOAD_FLAGS)];

const PROFILE_DIR = args.has('profile') ? path.join(repoRoot, 'bench', 'profiles') : null;

/**
 * The peer, side by side: Portkey's open-source gateway (it keeps no durable record), installed on demand
 * into the project cache and pointed at the same mock.
 */
const PEER = args.get('peer') ?? null;
const PORTKEY_VERSION = '1.15.2';
/**
 * Portkey 1.15.2 asks for @hono/node-server ^1.3.3, which now resolves to 1.14.2 or later, whose Response
 * keeps an upstream fetch's immutable headers: every stream then fails with `TypeError: immutable` (a 500;
 * Portkey-AI/gateway#1389). 1.14.1 copies them, so streams work: pinned through npm overrides.
 */
const PORTKEY_HONO_NODE_SERVER = '1.14.1';

async function startPortkey(): Promise<{ child: ChildProcess; url: string }> {
  const dir = path.join(repoRoot, '.cache', 'peers', `portkey-${PORTKEY_VERSION}-hono-node-server-${PORTKEY_HONO_NODE_SERVER}`);
  const entry = path.join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!fs.existsSync(entry)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({
      private: true,
      dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
      overrides: { '@hono/node-server': PORTKEY_HONO_NODE_SERVER },
    }, null, 2)}\n`);
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  const port = await freePort();
  const child = spawn(process.execPath, [entry, `--port=${port}`, '--headless'], { cwd: dir, env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(url).then((r) => r.ok, () => false)) return { child, url };
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('portkey did not start');
}

const round = (n: number) => Math.round(n * 100) / 100;

function uniqueKey(taken: Record<string, unknown>, name: string): string {
  let key = name;
  for (let n = 2; key in taken; n++) key = `${name} #${n}`;
  return key;
}

function summary(r: LoadResult) {
  return {
    requests: r.latencies.length, errors: r.errors, statuses: r.statuses,
    rps: round(r.latencies.length / (r.elapsedMs / 1000)),
    p50: round(percentile(r.latencies, 50)), p90: round(percentile(r.latencies, 90)), p99: round(percentile(r.latencies, 99)),
    max: round(r.latencies.reduce((a, b) => Math.max(a, b), 0)),
    ...(r.firstChunk.length ? { ttft_p50: round(percentile(r.firstChunk, 50)), ttft_p99: round(percentile(r.firstChunk, 99)) } : {}),
    ...(r.refusedLatencies.length ? { refused_p99: round(percentile(r.refusedLatencies, 99)) } : {}),
    // The server's own account of each phase (p50), where it sends Server-Timing.
    ...(Object.keys(r.serverTiming).length ? { serverTiming_p50: Object.fromEntries(Object.entries(r.serverTiming).map(([name, v]) => [name, round(percentile(v, 50))])) } : {}),
  };
}
type Summary = ReturnType<typeof summary>;

/** Serial latency, throughput at CONCURRENCY and a stream's TTFT against `url`, plus what it adds to calling the mock directly. */
async function measure(target: { url: string; headers: Record<string, string> }, direct: { serial: Summary; stream: Summary } | null, hooks: { beforeConcurrent?(): void; afterConcurrent?(s: Summary): void } = {}) {
  await runLoad({ ...target, body: CHAT, concurrency: 8, requests: 400 });
  const serial = summary(await runLoad({ ...target, body: CHAT, concurrency: 1, requests: SERIAL_REQUESTS, pauseMs: SERIAL_PAUSE_MS }));
  hooks.beforeConcurrent?.();
  const concurrent = summary(await runLoad({ ...target, body: CHAT, concurrency: CONCURRENCY, durationMs: CONCURRENT_MS }));
  hooks.afterConcurrent?.(concurrent);
  const stream = summary(await runLoad({ ...target, body: STREAM, concurrency: 1, requests: STREAM_REQUESTS, firstChunk: true, pauseMs: SERIAL_PAUSE_MS }));
  const added = direct ? {
    p50_ms: round(serial.p50 - direct.serial.p50),
    p99_ms: round(serial.p99 - direct.serial.p99),
    ttft_p50_ms: round((stream.ttft_p50 ?? NaN) - (direct.stream.ttft_p50 ?? 0)),
  } : undefined;
  return { serial, concurrent, stream, ...(added ? { added } : {}) };
}


const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 32 });
const STREAM = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 32, stream: true });

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, S3_ENDPOINT: undefined });
  const stack = await resolveStack(config, { mode: 'test', dbName: `gateway_bench_${process.pid}`, persistTemporal: true, dropDatabase: true });
  const mock = await startChild('bench/mock-upstream.js', {});
  const temporalPid = findPid(['start-dev', stack.temporalAddress.split(':')[1]]);
  const results: Record<string, any> = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}`, loadAverageAtStart: os.loadavg().map(round) },
    settings: { serialRequests: SERIAL_REQUESTS, serialPauseMs: SERIAL_PAUSE_MS, concurrentMs: CONCURRENT_MS, concurrency: CONCURRENCY, streamRequests: STREAM_REQUESTS, overloadConcurrency: OVERLOAD_CONCURRENCY, overloadMs: OVERLOAD_MS },
  };
  try {
    const direct = { url: `${mock.info.url}/v1/chat/completions`, headers: { authorization: 'Bearer bench' } };
    await runLoad({ ...direct, body: CHAT, concurrency: 4, requests: 500 });
    results.direct = await measure(direct, null);
    console.log('direct', JSON.stringify(results.direct));

    if (PEER === 'portkey') {
      const peer = await startPortkey();
      try {
        const target = { url: `${peer.url}/v1/chat/completions`, headers: { authorization: 'Bearer bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mock.info.url}/v1` } };
        results.peer = { name: `Portkey ${PORTKEY_VERSION}`, ...(await measure(target, results.direct)) };
        console.log('peer', JSON.stringify(results.peer));
      } finally {
        await stopChild(peer.child);
      }
    }

    if (FLOOR) {
      const floor = await startChild('bench/floor.js', {
        TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_PID: String(temporalPid ?? ''), FLOOR_SERIAL: String(Math.min(SERIAL_REQUESTS, 500)), FLOOR_PAUSE_MS: String(SERIAL_PAUSE_MS), FLOOR_CONCURRENCY: String(CONCURRENCY), FLOOR_DURATION_MS: String(CONCURRENT_MS),
      });
      results.floor = floor.info;
      await stopChild(floor.child);
      console.log('floor', JSON.stringify(results.floor));
    }

    results.variants = {};
    for (const name of VARIANT_NAMES) {
      const gateway = await startChild('bench/serve-gateway.js', {
        ...(tuned(name) ? GATEWAY_ENV : {}),
        ...variantEnv(name, mock.info.url),
        // The default task queue, as `npm start` uses it (its worker also serves scheduled work: one Worker).
        PORT: '0', LOG_LEVEL: 'warn',
        // One load generator on one address: the per-IP safety net is still checked, with room for the run.
        IP_RATE_LIMIT: '1000000000',
        DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress,
        S3_ENDPOINT: stack.s3.endpoint, S3_ACCESS_KEY_ID: stack.s3.accessKeyId, S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey, S3_BUCKET: stack.s3.bucket,
        OPENAI_BASE_URL: `${mock.info.url}/v1`, OPENAI_API_KEY: 'bench',
      }, [...nodeFlags(name), ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [])]);
      try {
        const pid = gateway.child.pid!;
        const target = { url: `${gateway.info.url}/v1/chat/completions`, headers: { authorization: `Bearer ${gateway.info.key}` } };
        // Resident memory when ready (idle), when the concurrent phase starts, and its peak during that phase;
        // CPU time per request of the gateway and the Temporal server during that phase.
        const probe: Record<string, any> = { atReady: memoryMiB(pid) };
        const pids = { gateway: pid, temporal: temporalPid };
        const result: Record<string, any> = await measure(target, results.direct, {
          beforeConcurrent: () => { probe.before = memoryMiB(pid); probe.peakReset = resetPeakRss(pid); probe.cpu = cpuSnapshot(pids); },
          afterConcurrent: (s) => { probe.after = memoryMiB(pid); probe.cpuMsPerRequest = cpuMsPerRequest(probe.cpu, cpuSnapshot(pids), s.requests); },
        });
        result.memory = probe.after && {
          ...probe.after, rssAtReadyMiB: probe.atReady?.rssMiB, rssBeforeConcurrentMiB: probe.before?.rssMiB,
          peakSince: probe.peakReset ? `the start of the concurrency-${CONCURRENCY} phase` : 'the process start',
        };
        result.concurrent.cpuMsPerRequest = probe.cpuMsPerRequest;
        if (name === 'default' && OVERLOAD_MS > 0) {
          const overload = await runLoad({ ...target, body: CHAT, concurrency: OVERLOAD_CONCURRENCY, durationMs: OVERLOAD_MS, honorRetryAfter: true });
          result.overload = summary(overload);
        }
        const floor = results.floor?.empty;
        if (floor) {
          result.vsFloor = {
            rps_ratio: round(result.concurrent.rps / floor.concurrent.rps),
            p50_over_floor_ms: round(result.serial.p50 - floor.serial.p50),
            ttft_over_floor_ms: round((result.stream.ttft_p50 ?? NaN) - floor.serial.p50),
          };
        }
        // A variant named twice (interleaved runs: `--variants=a,b,a,b`) keeps each run: `a`, `a #2`, ...
        const key = uniqueKey(results.variants, name);
        results.variants[key] = result;
        console.log(key, JSON.stringify(result));
      } finally {
        await stopChild(gateway.child);
      }
    }
  } finally {
    await stopChild(mock.child);
    await stack.stop();
    await stopAllProcesses();
  }
  results.machine.loadAverageAtEnd = os.loadavg().map(round);
  const dir = path.join(repoRoot, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${markdownReport(results)}\nresults written to ${path.relative(repoRoot, file)}`);
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
