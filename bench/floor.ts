/**
 * The floor, measured beside the gateway on the same Temporal server: an empty workflow, and one with a
 * single no-op local activity, each started eagerly by a client sharing one NativeConnection with the
 * worker that runs it (as the gateway's process does), its result awaited by long poll. Reports p50/p99 at
 * concurrency 1 and throughput at concurrency N, as one JSON line on stdout. Run by bench/run.ts as a child
 * process: TEMPORAL_ADDRESS, FLOOR_SERIAL, FLOOR_CONCURRENCY, FLOOR_DURATION_MS, and TEMPORAL_PID (the server's
 * process, for its CPU time per workflow).
 */
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { closedLoop, percentile } from './load';
import { cpuMsPerRequest, cpuSnapshot } from './proc';

const SERIAL = Number(process.env.FLOOR_SERIAL ?? 500);
const CONCURRENCY = Number(process.env.FLOOR_CONCURRENCY ?? 64);
const DURATION_MS = Number(process.env.FLOOR_DURATION_MS ?? 15_000);
const PAUSE_MS = Number(process.env.FLOOR_PAUSE_MS ?? 0);
const WORKFLOWS = { empty: 'emptyWorkflow', oneLocalActivity: 'oneLocalActivityWorkflow' } as const;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const client = new Client({ connection });
  const taskQueue = `bench-floor-${process.pid}`;
  const worker = await Worker.create({
    connection, taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflows'), logger: new DefaultLogger('WARN') }),
    activities: { noop: async () => 'ok' },
    // The gateway worker's settings (worker/worker.ts).
    maxCachedWorkflows: 2000,
    maxConcurrentWorkflowTaskExecutions: 200,
    maxConcurrentLocalActivityExecutions: 400,
  });
  let n = 0;
  // `starts`: how long the eager start alone took (the gateway's Server-Timing `start` is the same span).
  const run = async (workflow: string, latencies?: number[], starts?: number[]) => {
    const t0 = performance.now();
    const handle = await client.workflow.start(workflow, { taskQueue, workflowId: `${taskQueue}-${n++}`, requestEagerStart: true });
    starts?.push(performance.now() - t0);
    await handle.result();
    latencies?.push(performance.now() - t0);
  };
  const round = (x: number) => Math.round(x * 100) / 100;
  const results: Record<string, unknown> = {};
  await worker.runUntil(async () => {
    for (const [name, workflow] of Object.entries(WORKFLOWS)) {
      await closedLoop({ concurrency: 8, requests: 200 }, () => run(workflow));
      const serial: number[] = [];
      const starts: number[] = [];
      await closedLoop({ concurrency: 1, requests: SERIAL, pauseMs: PAUSE_MS }, () => run(workflow, serial, starts));
      const concurrent: number[] = [];
      const pids = { floor: process.pid, temporal: Number(process.env.TEMPORAL_PID) || null };
      const cpu = cpuSnapshot(pids);
      const elapsedMs = await closedLoop({ concurrency: CONCURRENCY, durationMs: DURATION_MS }, () => run(workflow, concurrent));
      results[name] = {
        serial: { requests: serial.length, p50: round(percentile(serial, 50)), p99: round(percentile(serial, 99)), startP50: round(percentile(starts, 50)) },
        concurrent: {
          requests: concurrent.length, rps: round(concurrent.length / (elapsedMs / 1000)), p50: round(percentile(concurrent, 50)), p99: round(percentile(concurrent, 99)),
          cpuMsPerRequest: cpuMsPerRequest(cpu, cpuSnapshot(pids), concurrent.length),
        },
      };
    }
  });
  await connection.close();
  process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
