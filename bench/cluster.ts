/**
 * `node dist/bench/cluster.js`: the dev server (`temporal server start-dev`, SQLite file, one shard) beside the
 * production-shaped cluster (the Temporal server on Postgres, 16 shards: stack/temporal-cluster.ts) in one run,
 * against the same mock upstream, Postgres and MinIO. For each: the floor (bench/floor.ts) and one gateway
 * API+worker process (bench/serve-gateway.ts): p50 at concurrency 1, req/s at concurrency 64, CPU time per
 * request of the gateway and of the Temporal server, and Temporal's storage per request (the SQLite file and its
 * WAL; the cluster's two databases). On the cluster also two API+worker processes, the load split between them.
 * Results go to bench/results/cluster-<timestamp>.json and a table to stdout.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../config/env';
import { repoRoot } from '../core/paths';
import { resolveStack } from '../stack';
import { ensureGoTool, TEMPORAL_SERVER, TEMPORAL_SQL_TOOL } from '../stack/go-tools';
import { stopAllProcesses } from '../stack/processes';
import { TemporalCluster } from '../stack/temporal-cluster';
import { startChild, stopChild } from './children';
import { percentile, runLoad } from './load';
import { cpuSeconds, findPid } from './proc';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const SERIAL = Number(args.get('serial') ?? 300);
const DURATION_MS = Number(args.get('duration-ms') ?? 15_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 64);
const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 32 });
const { GATEWAY_NODE_FLAGS, GATEWAY_ENV } = require(path.join(repoRoot, 'scripts', 'bootstrap.js')) as { GATEWAY_NODE_FLAGS: string[]; GATEWAY_ENV: Record<string, string> };
const round = (n: number) => Math.round(n * 100) / 100;

interface Target {
  name: string;
  address: string;
  temporalPid: () => number | null;
  /** Bytes Temporal keeps for this target now. */
  storageBytes: () => Promise<number>;
}

/** CPU seconds so far of each Postgres backend serving one of `databases`, by pid. */
async function backendCpu(pgUrl: string, databases: string[]): Promise<Map<number, number>> {
  const pg = new PgClient({ connectionString: pgUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ pid: number }>('select pid from pg_stat_activity where datname = any($1) and pid <> pg_backend_pid()', [databases]);
    return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
  } finally {
    await pg.end();
  }
}

/** CPU seconds of each named process and of the Postgres backends of each named group of databases, and Temporal's storage, around one phase. */
async function around<T>(pids: Record<string, number | null>, postgres: { url: string; groups: Record<string, string[]> }, target: Target, phase: () => Promise<T & { requests: number }>) {
  const cpu = (p: Record<string, number | null>) => Object.fromEntries(Object.entries(p).map(([k, pid]) => [k, pid ? cpuSeconds(pid) : NaN]));
  const groups = Object.entries(postgres.groups);
  const storageBefore = await target.storageBytes();
  const pgBefore = await Promise.all(groups.map(([, dbs]) => backendCpu(postgres.url, dbs)));
  const before = cpu(pids);
  const result = await phase();
  const after = cpu(pids);
  const pgAfter = await Promise.all(groups.map(([, dbs]) => backendCpu(postgres.url, dbs)));
  const storageAfter = await target.storageBytes();
  // A backend that started during the phase counts from zero; one that ended is missed (the pools keep theirs open).
  const pgMs = groups.map(([name], i) => [`postgres (${name})`, round(([...pgAfter[i]].reduce((sum, [pid, s]) => sum + s - (pgBefore[i].get(pid) ?? 0), 0) * 1000) / result.requests)]);
  return {
    ...result,
    cpuMsPerRequest: { ...Object.fromEntries(Object.keys(pids).map((k) => [k, round(((after[k] - before[k]) * 1000) / result.requests)])), ...Object.fromEntries(pgMs) },
    storageKiBPerRequest: round((storageAfter - storageBefore) / 1024 / result.requests),
  };
}

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, S3_ENDPOINT: undefined });
  const stack = await resolveStack(config, { mode: 'test', dbName: `gateway_bench_cl_${process.pid}`, persistTemporal: true, dropDatabase: true });
  const pgUrl = stack.databaseUrl;
  const clusterDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cluster-'));
  const cluster = await TemporalCluster.start({
    binaries: { server: ensureGoTool(TEMPORAL_SERVER, config.cacheDir), sqlTool: ensureGoTool(TEMPORAL_SQL_TOOL, config.cacheDir) },
    postgresUrl: pgUrl, databasePrefix: `temporal_bench_${process.pid}`, dir: clusterDir, port: 0,
  });
  const mock = await startChild('bench/mock-upstream.js', {});
  const devPid = findPid(['start-dev', stack.temporalAddress.split(':')[1]]);
  // The dev server's SQLite file, from its command line.
  const devArgs = devPid ? fs.readFileSync(`/proc/${devPid}/cmdline`, 'utf8').split('\0') : [];
  const sqlite = devArgs.includes('--db-filename') ? devArgs[devArgs.indexOf('--db-filename') + 1] : null;
  const fileBytes = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  const dbBytes = async () => {
    const pg = new PgClient({ connectionString: pgUrl });
    await pg.connect();
    try {
      const { persistence, visibility } = cluster.databases;
      return Number((await pg.query('select pg_database_size($1) + pg_database_size($2) as n', [persistence, visibility])).rows[0].n);
    } finally {
      await pg.end();
    }
  };
  const targets: Target[] = [
    { name: 'dev server (SQLite, 1 shard)', address: stack.temporalAddress, temporalPid: () => devPid, storageBytes: async () => (sqlite ? fileBytes(sqlite) + fileBytes(`${sqlite}-wal`) : NaN) },
    { name: 'cluster (Postgres, 16 shards)', address: cluster.address, temporalPid: () => cluster.serverPid(), storageBytes: dbBytes },
  ];
  const results: Record<string, any> = {
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, loadAverageAtStart: os.loadavg().map(round) },
    settings: { serial: SERIAL, durationMs: DURATION_MS, concurrency: CONCURRENCY },
    targets: {},
  };
  const gatewayEnv = (address: string) => ({
    ...GATEWAY_ENV, PORT: '0', LOG_LEVEL: 'warn', IP_RATE_LIMIT: '1000000000',
    DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: address,
    S3_ENDPOINT: stack.s3.endpoint, S3_ACCESS_KEY_ID: stack.s3.accessKeyId, S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey, S3_BUCKET: stack.s3.bucket,
    OPENAI_BASE_URL: `${mock.info.url}/v1`, OPENAI_API_KEY: 'bench',
  });
  const gatewayDb = new URL(stack.databaseUrl).pathname.slice(1);
  const postgresGroups = (target: Target) => ({
    url: pgUrl,
    groups: { gateway: [gatewayDb], ...(target.address === cluster.address ? { temporal: [cluster.databases.persistence, cluster.databases.visibility] } : {}) },
  });
  const concurrentPhase = async (gateways: Array<{ url: string; key: string }>) => {
    const loads = await Promise.all(gateways.map((g) => runLoad({
      url: `${g.url}/v1/chat/completions`, headers: { authorization: `Bearer ${g.key}` }, body: CHAT, concurrency: CONCURRENCY / gateways.length, durationMs: DURATION_MS,
    })));
    const latencies = loads.flatMap((l) => l.latencies);
    const elapsed = Math.max(...loads.map((l) => l.elapsedMs));
    return { requests: latencies.length, errors: loads.reduce((n, l) => n + l.errors, 0), rps: round(latencies.length / (elapsed / 1000)), p99: round(percentile(latencies, 99)) };
  };
  try {
    for (const target of targets) {
      const out: Record<string, any> = {};
      const floor = await startChild('bench/floor.js', {
        TEMPORAL_ADDRESS: target.address, TEMPORAL_PID: String(target.temporalPid() ?? ''), FLOOR_SERIAL: String(SERIAL), FLOOR_CONCURRENCY: String(CONCURRENCY), FLOOR_DURATION_MS: String(DURATION_MS),
      });
      out.floor = floor.info;
      await stopChild(floor.child);
      const first = await startChild('bench/serve-gateway.js', gatewayEnv(target.address), GATEWAY_NODE_FLAGS);
      const gateways = [first];
      try {
        const g = first.info as { url: string; key: string };
        const one = { url: `${g.url}/v1/chat/completions`, headers: { authorization: `Bearer ${g.key}` }, body: CHAT };
        await runLoad({ ...one, concurrency: 8, requests: 300 });
        const serial = await runLoad({ ...one, concurrency: 1, requests: SERIAL });
        out.onePair = {
          p50: round(percentile(serial.latencies, 50)),
          ...(await around({ gateway: first.child.pid!, temporal: target.temporalPid() }, postgresGroups(target), target, () => concurrentPhase([g]))),
        };
        if (target.address === cluster.address) {
          const second = await startChild('bench/serve-gateway.js', gatewayEnv(target.address), GATEWAY_NODE_FLAGS);
          gateways.push(second);
          const both = gateways.map((x) => x.info as { url: string; key: string });
          await runLoad({ url: `${both[1].url}/v1/chat/completions`, headers: { authorization: `Bearer ${both[1].key}` }, body: CHAT, concurrency: 8, requests: 300 });
          out.twoPairs = await around({ gateway1: first.child.pid!, gateway2: second.child.pid!, temporal: target.temporalPid() }, postgresGroups(target), target, () => concurrentPhase(both));
        }
      } finally {
        for (const x of gateways) await stopChild(x.child);
      }
      results.targets[target.name] = out;
      console.log(target.name, JSON.stringify(out));
    }
  } finally {
    await stopChild(mock.child);
    await cluster.stop({ dropDatabases: true });
    fs.rmSync(clusterDir, { recursive: true, force: true });
    await stack.stop();
    await stopAllProcesses();
  }
  results.machine.loadAverageAtEnd = os.loadavg().map(round);
  const file = path.join(repoRoot, 'bench', 'results', `cluster-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${clusterTable(results)}\nresults written to ${path.relative(repoRoot, file)}`);
}

/** The run as a Markdown table: one row per target and shape (CPU in ms per request). */
export function clusterTable(r: Record<string, any>): string {
  const rows = [['target', 'floor p50 c=1', 'floor req/s c=64', 'gateway p50 c=1', 'gateway req/s c=64', 'CPU: Temporal', 'gateway', 'Postgres (gateway db)', 'Postgres (Temporal dbs)', 'Temporal storage KiB/req']];
  for (const [name, t] of Object.entries(r.targets as Record<string, any>)) {
    const row = (label: string, shape: Record<string, any>, floor: boolean) => {
      const cpu = shape.cpuMsPerRequest as Record<string, number>;
      const gateway = Object.entries(cpu).filter(([k]) => k.startsWith('gateway')).reduce((sum, [, v]) => sum + v, 0);
      rows.push([label, floor ? `${t.floor.empty.serial.p50} ms` : '', floor ? `${t.floor.empty.concurrent.rps}` : '', shape.p50 !== undefined ? `${shape.p50} ms` : '', `${shape.rps}`,
        `${cpu.temporal}`, `${round(gateway)}`, `${cpu['postgres (gateway)'] ?? ''}`, `${cpu['postgres (temporal)'] ?? '(in the server)'}`, `${shape.storageKiBPerRequest}`]);
    };
    row(name, t.onePair, true);
    if (t.twoPairs) row(`${name}, 2 API+worker processes`, t.twoPairs, false);
  }
  return rows.map((row, i) => `| ${row.join(' | ')} |${i === 0 ? `\n|${row.map(() => '---').join('|')}|` : ''}`).join('\n');
}

if (require.main === module) {
  main().catch(async (err) => {
    console.error(err);
    await stopAllProcesses();
    process.exit(1);
  });
}
