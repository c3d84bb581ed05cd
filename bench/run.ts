/**
 * `npm run bench`: the gateway's own overhead, measured against a fake upstream on loopback with the real
 * stack (Temporal dev server with its SQLite file, Postgres, MinIO). For each gateway variant: added latency
 * at concurrency 1 (p50/p99 vs calling the upstream directly), throughput and p99 at concurrency 64, and the
 * added time to first token of a stream. Results go to bench/results/<timestamp>.json and stdout.
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

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const SERIAL_REQUESTS = Number(args.get('serial') ?? 1000);
const CONCURRENT_MS = Number(args.get('duration-ms') ?? 20_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const STREAM_REQUESTS = Number(args.get('stream') ?? 300);

/** Gateway variants: each runs in a fresh process with these extra environment variables. */
const VARIANTS: Array<{ name: string; env: Record<string, string> }> = (args.get('variants') ?? 'default')
  .split(',')
  .filter(Boolean)
  .map((name) => ({ name, env: variantEnv(name) }));

function variantEnv(name: string): Record<string, string> {
  switch (name) {
    case 'default': return {};
    case 'remote-activities': return { GATEWAY_ACTIVITY_MODE: 'remote' };
    case 'no-eager-start': return { GATEWAY_EAGER_START: 'false' };
    case 'history-results': return { GATEWAY_INPROCESS_RESULTS: 'false' };
    case 'baseline': return { GATEWAY_ACTIVITY_MODE: 'remote', GATEWAY_EAGER_START: 'false', GATEWAY_INPROCESS_RESULTS: 'false' };
    default: throw new Error(`unknown variant ${name}`);
  }
}

const PROFILE_DIR = args.has('profile') ? path.join(repoRoot, 'bench', 'profiles') : null;

function startChild(script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<{ child: ChildProcess; info: Record<string, string> }> {
  const child = spawn(process.execPath, [...nodeArgs, path.join(repoRoot, 'dist', script)], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, info: JSON.parse(line) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The peer, side by side: Portkey's open-source gateway (it keeps no durable record), installed on demand
 * into the project cache and pointed at the same mock.
 */
const PEER = args.get('peer') ?? null;
const PORTKEY_VERSION = '1.15.2';

async function startPortkey(): Promise<{ child: ChildProcess; url: string }> {
  const dir = path.join(repoRoot, '.cache', 'peers', `portkey-${PORTKEY_VERSION}`);
  const entry = path.join(dir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  if (!fs.existsSync(entry)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', `@portkey-ai/gateway@${PORTKEY_VERSION}`], { stdio: 'inherit' });
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

function summary(r: LoadResult) {
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    requests: r.latencies.length, errors: r.errors, statuses: r.statuses,
    rps: round(r.latencies.length / (r.elapsedMs / 1000)),
    p50: round(percentile(r.latencies, 50)), p90: round(percentile(r.latencies, 90)), p99: round(percentile(r.latencies, 99)),
    ...(r.firstChunk.length ? { ttft_p50: round(percentile(r.firstChunk, 50)), ttft_p99: round(percentile(r.firstChunk, 99)) } : {}),
  };
}

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, S3_ENDPOINT: undefined });
  const stack = await resolveStack(config, { mode: 'test', dbName: `gateway_bench_${process.pid}`, persistTemporal: true });
  const mock = await startChild('bench/mock-upstream.js', {});
  const results: Record<string, unknown> = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` },
    settings: { serialRequests: SERIAL_REQUESTS, concurrentMs: CONCURRENT_MS, concurrency: CONCURRENCY, streamRequests: STREAM_REQUESTS },
  };
  try {
    const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 32 });
    const stream = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 32, stream: true });
    const direct = { url: `${mock.info.url}/v1/chat/completions`, headers: { authorization: 'Bearer bench' } };

    await runLoad({ ...direct, body: chat, concurrency: 4, requests: 500 });
    const directSerial = await runLoad({ ...direct, body: chat, concurrency: 1, requests: SERIAL_REQUESTS });
    const directConcurrent = await runLoad({ ...direct, body: chat, concurrency: CONCURRENCY, durationMs: CONCURRENT_MS });
    const directStream = await runLoad({ ...direct, body: stream, concurrency: 1, requests: STREAM_REQUESTS, firstChunk: true });
    results.direct = { serial: summary(directSerial), concurrent: summary(directConcurrent), stream: summary(directStream) };
    console.log('direct', JSON.stringify(results.direct));

    if (PEER === 'portkey') {
      const peer = await startPortkey();
      try {
        const target = { url: `${peer.url}/v1/chat/completions`, headers: { authorization: 'Bearer bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mock.info.url}/v1` } };
        await runLoad({ ...target, body: chat, concurrency: 8, requests: 400 });
        const serial = summary(await runLoad({ ...target, body: chat, concurrency: 1, requests: SERIAL_REQUESTS }));
        const concurrent = summary(await runLoad({ ...target, body: chat, concurrency: CONCURRENCY, durationMs: CONCURRENT_MS }));
        const streamed = summary(await runLoad({ ...target, body: stream, concurrency: 1, requests: STREAM_REQUESTS, firstChunk: true }));
        const d = results.direct as { serial: ReturnType<typeof summary>; stream: ReturnType<typeof summary> };
        results[`peer-portkey-${PORTKEY_VERSION}`] = {
          serial, concurrent, stream: streamed,
          added: {
            p50_ms: Math.round((serial.p50 - d.serial.p50) * 100) / 100,
            p99_ms: Math.round((serial.p99 - d.serial.p99) * 100) / 100,
            ttft_p50_ms: Math.round(((streamed.ttft_p50 ?? 0) - (d.stream.ttft_p50 ?? 0)) * 100) / 100,
          },
        };
        console.log(`peer-portkey-${PORTKEY_VERSION}`, JSON.stringify(results[`peer-portkey-${PORTKEY_VERSION}`]));
      } finally {
        await stopChild(peer.child);
      }
    }

    for (const variant of VARIANTS) {
      const gateway = await startChild('bench/serve-gateway.js', {
        ...variant.env,
        PORT: '0', LOG_LEVEL: 'warn', TEMPORAL_TASK_QUEUE: `bench-${variant.name}`,
        // One load generator on one address: the per-IP safety net is still checked, with room for the run.
        IP_RATE_LIMIT: '1000000000',
        DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress,
        S3_ENDPOINT: stack.s3.endpoint, S3_ACCESS_KEY_ID: stack.s3.accessKeyId, S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey, S3_BUCKET: stack.s3.bucket,
        OPENAI_BASE_URL: `${mock.info.url}/v1`, OPENAI_API_KEY: 'bench',
      }, PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []);
      try {
        const target = { url: `${gateway.info.url}/v1/chat/completions`, headers: { authorization: `Bearer ${gateway.info.key}` } };
        await runLoad({ ...target, body: chat, concurrency: 8, requests: 400 });
        const serial = await runLoad({ ...target, body: chat, concurrency: 1, requests: SERIAL_REQUESTS });
        const concurrent = await runLoad({ ...target, body: chat, concurrency: CONCURRENCY, durationMs: CONCURRENT_MS });
        const streamed = await runLoad({ ...target, body: stream, concurrency: 1, requests: STREAM_REQUESTS, firstChunk: true });
        const s = summary(serial);
        const st = summary(streamed);
        const d = results.direct as { serial: ReturnType<typeof summary>; stream: ReturnType<typeof summary> };
        results[variant.name] = {
          serial: s, concurrent: summary(concurrent), stream: st,
          added: {
            p50_ms: Math.round((s.p50 - d.serial.p50) * 100) / 100,
            p99_ms: Math.round((s.p99 - d.serial.p99) * 100) / 100,
            ttft_p50_ms: Math.round(((st.ttft_p50 ?? 0) - (d.stream.ttft_p50 ?? 0)) * 100) / 100,
          },
        };
        console.log(variant.name, JSON.stringify(results[variant.name]));
      } finally {
        await stopChild(gateway.child);
      }
    }
  } finally {
    await stopChild(mock.child);
    await stack.stop();
    await stopAllProcesses();
  }
  const dir = path.join(repoRoot, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`results written to ${path.relative(repoRoot, file)}`);
}

main().catch(async (err) => {
  console.error(err);
  await stopAllProcesses();
  process.exit(1);
});
