/**
 * Builds the gateway's worker on a shared NativeConnection. The workflow bundle is prebuilt at build time
 * or, failing that, built once per process and reused by every worker the process creates
 * (worker/workflow-bundle.ts).
 */
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import {
  makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { Tracing } from '../infra/tracing';
import type { ActivityDeps } from '../activities';
import { createActivities, createStreamActivities } from '../activities';
import type { StreamRegistry } from '../activities/stream-registry';
import { resultSinks } from './result-sinks';
import { workflowBundle } from './workflow-bundle';
import { SANDBOX_CALL_TIMEOUT_MS } from './sandbox-options';

/** Activity spans (joined to the workflow's) and the sink that exports workflow spans, when tracing is on. */
function tracingOptions(tracing: Tracing | null | undefined): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  if (!tracing) return {};
  return {
    interceptors: {
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

export interface GatewayWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  /** The connection's encrypting data converter; activities' own clients (Context.current().client) inherit it. */
  dataConverter: DataConverter;
  taskQueue: string;
  /** With `results`, the request workflows' outcomes go to an API in this process (activities/result-broker.ts). */
  deps: ActivityDeps;
  /** Streams held by an API in this process (empty in a worker-only process). */
  streams: StreamRegistry;
  tracing?: Tracing | null;
  /** How long a stopping worker lets its running activities finish before it cancels them (GATEWAY_SHUTDOWN_GRACE_SECONDS). */
  shutdownGraceMs?: number;
}

/** The shutdownGraceTime of a worker built without one (GATEWAY_SHUTDOWN_GRACE_SECONDS' default). */
const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/**
 * A stopping worker's grace for its running activities, and the bound after which it gives up waiting for those
 * that ignore their cancellation (its `run()` then rejects, and the process goes on stopping).
 */
function shutdownTimes(graceMs = DEFAULT_SHUTDOWN_GRACE_MS): Pick<WorkerOptions, 'shutdownGraceTime' | 'shutdownForceTime'> {
  return { shutdownGraceTime: graceMs, shutdownForceTime: graceMs + 10_000 };
}

export async function createGatewayWorker(opts: GatewayWorkerOptions): Promise<Worker> {
  const traced = tracingOptions(opts.tracing);
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    dataConverter: opts.dataConverter,
    taskQueue: opts.taskQueue,
    workflowBundle: await workflowBundle(opts.tracing ? 'tracing' : 'default'),
    activities: { ...createActivities(opts.deps), ...createStreamActivities({ ...opts.deps, streams: opts.streams }) },
    interceptors: traced.interceptors,
    sinks: { ...(opts.deps.results ? resultSinks(opts.deps.results) : {}), ...traced.sinks },
    // Short request workflows: keep many cached so sticky execution avoids history replays.
    maxCachedWorkflows: 2000,
    // A request's workflow task stays open while its hop (a local activity) runs, so every request in flight
    // holds a slot for its whole duration, and eager start is only asked for while one is free. At 200, under
    // overload (GATEWAY_MAX_IN_FLIGHT 128 plus streams and watchers) runs started without one waited seconds
    // on the normal queue: served p99 at concurrency 256 was 4.2-6.8 s, 2.3-2.5 s at 600 (bench/results/HISTORY.md "Overload").
    maxConcurrentWorkflowTaskExecutions: 600,
    maxConcurrentActivityTaskExecutions: 400,
    maxConcurrentLocalActivityExecutions: 400,
    // Runs the server could not start eagerly (no free slot at that moment) wait on the normal queue: with the
    // SDK's 0.2 only 2 of 10 pollers serve it, and at the in-flight bound those runs waited 3-5 s before their first
    // task (the overload p99 tail; bench/results/HISTORY.md "Overload"). Request workflows need few sticky pollers.
    nonStickyToStickyPollRatio: 1,
    // A stream's running usage reaches the server within a second (the SDK's default waits most of the heartbeat timeout).
    maxHeartbeatThrottleInterval: '1 second',
    ...shutdownTimes(opts.shutdownGraceMs),
    // Calls into the workflow sandbox run without a watchdog thread each where worker/sandbox-preload.ts is
    // preloaded. The SDK takes this option though its type does not list it; were it ignored, its own 5 s applies.
    ...{ isolateExecutionTimeout: SANDBOX_CALL_TIMEOUT_MS },
  } as WorkerOptions);
}

/**
 * The per-API-process stream worker: activities only, on a task queue no other process polls, so stream
 * activities land where the client's connection is.
 */
export async function createStreamWorker(opts: { connection: NativeConnection; namespace: string; dataConverter: DataConverter; taskQueue: string; deps: ActivityDeps & { streams: StreamRegistry }; tracing?: Tracing | null; shutdownGraceMs?: number }): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    dataConverter: opts.dataConverter,
    taskQueue: opts.taskQueue,
    activities: createStreamActivities(opts.deps),
    interceptors: tracingOptions(opts.tracing).interceptors,
    maxConcurrentActivityTaskExecutions: 1000,
    maxHeartbeatThrottleInterval: '1 second',
    ...shutdownTimes(opts.shutdownGraceMs),
  });
}
