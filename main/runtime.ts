/**
 * Assembles a gateway process from resolved store addresses: migrations and seeds, the shared Temporal
 * connection, and the API server and/or the worker. `npm start` runs both in one process; the `api` and
 * `worker` entry points run one each, for scale-out.
 */
import type { Worker } from '@temporalio/worker';
import { temporal as proto } from '@temporalio/proto';
import { createApp } from '../api/app';
import { startHttpServer, type HttpServerHandle } from '../api/http/server';
import type { GatewayConfig } from '../config/env';
import { createDb, type Db } from '../db/connection';
import { prepareDatabase } from '../domain/database-setup';
import { onSettlement } from '../domain/request-accounting';
import { microToCredits } from '../core/money';
import { ModelCatalog } from '../domain/model-catalog';
import type { ProviderRegistry } from '../providers/registry';
import { providersFromEnv } from './providers';
import { ProviderKeyRing, WorkspaceProviderKeys } from '../domain/provider-keys';
import { createGatewayWorker, createStreamWorker } from '../worker/worker';
import { stripeClient } from '../infra/stripe';
import { ResultBroker } from '../activities/result-broker';
import { FirstHops } from '../activities/first-hop';
import { firstHopStarter } from '../activities';
import { refund } from '../domain/ledger';
import { StreamRegistry } from '../activities/stream-registry';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { GATEWAY_SEARCH_ATTRIBUTES, SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import { log as defaultLog, type Logger } from '../core/log';
import { ObjectStorage, type StorageConfig } from '../infra/storage';
import { connectTemporal, type TemporalHandles } from '../infra/temporal';
import { AesGcmPayloadCodec, gatewayDataConverter, resolveCodecKeys, resolveOperatorToken } from '../infra/payload-codec';
import { GatewayMetrics, serveWorkerEndpoints } from '../infra/metrics';
import { Draining, readiness, readinessChecks } from '../infra/probes';
import { ServiceUnavailableError } from '../core/errors';
import { startTracing } from '../infra/tracing';
import { ensureMonthlyGrantSchedule, MONTHLY_GRANT_SCHEDULE_ID } from '../worker/grant-schedule';
import { ensureHoldSweeperSchedule } from '../worker/schedules';
import { HOLD_SWEEPER_SCHEDULE_ID } from '../workflows/contracts';
import { PostgresWindowCounters, type WindowCounters } from '../domain/rate-limits';
import { RedisWindowCounters } from '../domain/redis-counters';
import { connectRedisCounters } from '../infra/redis';
import { checkDeployedModels, PostgresDeploymentState, RedisDeploymentState } from '../domain/deployment-state';

export interface RuntimeOptions {
  config: GatewayConfig;
  databaseUrl: string;
  temporalAddress: string;
  s3: StorageConfig;
  api: boolean;
  worker: boolean;
  /** Overrides the listening port (0 = any free port; tests). */
  port?: number;
  providers?: ProviderRegistry;
  log?: Logger;
}

export interface Runtime {
  db: Db;
  temporal: TemporalHandles;
  storage: ObjectStorage;
  catalog: ModelCatalog;
  providers: ProviderRegistry;
  http: HttpServerHandle | null;
  worker: Worker | null;
  metrics: GatewayMetrics | null;
  /** The operator token (OPERATOR_TOKEN, else the development one; null in production without it): /codec and /metrics. */
  operatorToken: string | null;
  /** The address links in e-mails use: PUBLIC_URL, else the API's listen address (null without an API). */
  publicUrl: string | null;
  /** Where a process without the API serves its metrics (on its health port), else null. */
  workerMetricsUrl: string | null;
  /** Where a process without the API answers /livez and /readyz (WORKER_HEALTH_PORT), else null. */
  workerHealthUrl: string | null;
  /** Set at the start of a shutdown: /readyz answers 503, the API refuses new requests. */
  draining: Draining;
  /**
   * The graceful stop (SIGTERM, SIGINT): not ready at once; the API refuses new requests and lets those in flight
   * end within the grace period (GATEWAY_SHUTDOWN_GRACE_SECONDS), then cuts the rest; then the workers drain
   * (Worker.shutdown, their running activities given the same grace); then Temporal, Redis and the pools close.
   */
  shutdown(graceMs?: number): Promise<void>;
  /** The same with 10 s for the API's requests (tests, tools); the workers keep their configured grace. */
  stop(): Promise<void>;
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const log = opts.log ?? defaultLog;
  const db = createDb(opts.databaseUrl, { poolMax: opts.config.databasePoolMax });
  await prepareDatabase(db);
  const storage = new ObjectStorage(opts.s3);
  // Object storage is not needed to start (chat never touches it): the bucket is made now if S3 answers, else on first use.
  storage.ensureBucket().catch((err) => log.warn({ err }, 'object storage is unavailable; the bucket is created on first use'));
  const codec = new AesGcmPayloadCodec(resolveCodecKeys(opts.config));
  const tracing = opts.config.otlpEndpoint ? startTracing({ endpoint: opts.config.otlpEndpoint, serviceName: opts.config.otelServiceName }) : null;
  const temporal = await connectTemporal(opts.temporalAddress, opts.config.temporalNamespace, gatewayDataConverter(codec), {
    metrics: opts.config.metricsEnabled, metricsAddress: opts.config.temporalMetricsAddress, tracing: Boolean(tracing),
  }, opts.config.temporalTls);
  const metrics = opts.config.metricsEnabled ? new GatewayMetrics(temporal.metricsUrl) : null;
  // Charges are counted where they settle (the worker's ledger calls, a stream's own settlement in the API's stream worker).
  const unobserveCharges = metrics ? onSettlement((s) => metrics.observeCharge({ endpoint: s.endpoint, model: s.model, credits: microToCredits(s.chargedMicro) })) : null;
  await ensureSearchAttributes(temporal, log);
  const catalog = new ModelCatalog(db);
  await catalog.reload();
  const providers = opts.providers ?? providersFromEnv();
  const closeDeployments = await shareDeploymentState(providers, catalog, opts.config, db, log);
  // Workspaces' own provider keys, when a BYOK key ring is configured (config/env.ts).
  const providerKeys = opts.config.byok
    ? new WorkspaceProviderKeys(db, providers, new ProviderKeyRing(opts.config.byok.keyRing), opts.config.byok.feeBasisPoints)
    : undefined;

  const results = new ResultBroker();
  // The payment processor (Stripe), when configured: self-serve top-ups and automatic ones.
  const stripe = opts.config.payments ? stripeClient(opts.config.payments) : null;
  // First hops begun by the API while their runs start eagerly on this process's worker (activities/first-hop.ts).
  const firstHops = opts.api && opts.worker && opts.config.eagerStart && opts.config.inProcessResults && opts.config.firstHopAhead && opts.config.activityMode === 'local'
    ? new FirstHops({ release: (reservationId, reason) => refund(db, { reservationId, reason }), tracer: tracing?.tracer })
    : undefined;
  // Streams this process holds. The main worker gets the stream activities too, bound to this registry:
  // eagerly dispatched, a stream activity then runs right here without a trip through the server.
  const streamRegistry = new StreamRegistry();
  const draining = new Draining();
  const shutdownGraceMs = opts.config.shutdownGraceMs;
  let worker: Worker | null = null;
  const running: Array<{ worker: Worker; run: Promise<void> }> = [];
  if (opts.worker) {
    const deps = { db, catalog, storage, providers, providerKeys, watcherTaskQueue: opts.config.temporalTaskQueue, observer: metrics?.activityObserver, results, firstHops, notifications: { smtpUrl: opts.config.smtpUrl ?? null, emailFrom: opts.config.smtpFrom, allowPrivateWebhooks: opts.config.allowPrivateWebhooks, deliveryGiveUpMs: opts.config.alertDeliveryGiveUpMs },
      payments: stripe && opts.config.payments ? { stripe, config: opts.config.payments, publicUrl: opts.config.publicUrl } : undefined };
    worker = await createGatewayWorker({
      connection: temporal.connection,
      namespace: temporal.namespace,
      dataConverter: temporal.dataConverter,
      taskQueue: opts.config.temporalTaskQueue,
      deps,
      streams: streamRegistry,
      tracing,
      shutdownGraceMs,
    });
    running.push({ worker, run: worker.run().catch((err) => { log.error({ err }, 'worker stopped with an error'); }) });
    // Scheduled work has a task queue of its own, which every worker process polls.
    if (opts.config.temporalTaskQueue !== SCHEDULED_TASK_QUEUE) {
      const scheduled = await createGatewayWorker({
        connection: temporal.connection, namespace: temporal.namespace, dataConverter: temporal.dataConverter, taskQueue: SCHEDULED_TASK_QUEUE, deps, streams: streamRegistry, shutdownGraceMs,
      });
      running.push({ worker: scheduled, run: scheduled.run().catch((err) => { log.error({ err }, 'scheduled-work worker stopped with an error'); }) });
    }
    await ensureMonthlyGrantSchedule(temporal.client).then(
      (outcome) => log.info({ schedule: MONTHLY_GRANT_SCHEDULE_ID, outcome }, 'monthly credit grant schedule'),
      (err) => log.error({ err }, 'could not create the monthly credit grant schedule'),
    );
    await ensureHoldSweeperSchedule(temporal.client, opts.config.holdSweep).then(
      (outcome) => log.info({ schedule: HOLD_SWEEPER_SCHEDULE_ID, outcome }, 'hold sweeper schedule'),
      (err) => log.error({ err }, 'could not create the hold sweeper schedule'),
    );
  }

  const operatorToken = resolveOperatorToken(opts.config);
  let http: HttpServerHandle | null = null;
  let closeCounters = async (): Promise<void> => undefined;
  if (opts.api) {
    const { counters, close } = await windowCounters(opts.config, opts.databaseUrl, log);
    closeCounters = close;
    const streaming = {
      registry: streamRegistry,
      taskQueue: `${opts.config.temporalTaskQueue}-stream-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
      localWorker: opts.worker,
    };
    const streamWorker = await createStreamWorker({
      connection: temporal.connection, namespace: temporal.namespace, dataConverter: temporal.dataConverter, taskQueue: streaming.taskQueue,
      deps: { db, catalog, storage, providers, providerKeys, watcherTaskQueue: opts.config.temporalTaskQueue, streams: streaming.registry, observer: metrics?.activityObserver, firstHops },
      tracing,
      shutdownGraceMs,
    });
    // Stopped first: streams end before the workers whose workflows wait for them.
    running.unshift({ worker: streamWorker, run: streamWorker.run().catch((err) => { log.error({ err }, 'stream worker stopped with an error'); }) });
    const app = createApp({
      config: opts.config, db, catalog, counters, storage, log, streaming,
      temporal: { client: temporal.client, taskQueue: opts.config.temporalTaskQueue },
      // In-process results only help when this process also runs the worker that eagerly takes the run.
      results: opts.worker && opts.config.inProcessResults ? results : null,
      firstHop: firstHops ? firstHopStarter({
        db, catalog, storage, providers, providerKeys, streams: streamRegistry, firstHops, watcherTaskQueue: opts.config.temporalTaskQueue, watcherClient: temporal.client,
      }) : null,
      providerKeys: providerKeys ?? null,
      isProviderConfigured: (id, model) => providers.serves(id, model),
      operators: { codec, token: operatorToken },
      payments: stripe ? { stripe } : null,
      publicUrl: () => opts.config.publicUrl ?? listenUrl(http),
      metrics, tracing, draining,
    });
    http = await startHttpServer(app, { host: opts.config.host, port: opts.port ?? opts.config.port });
  }
  // A worker alone has no API to answer probes and /metrics: its health port does.
  const healthServer = !opts.api ? await serveHealth(opts.config, {
    metrics, operatorToken, log,
    readiness: () => readiness(readinessChecks({ db, temporal: temporal.client }), draining),
  }) : null;
  if (healthServer) log.info({ url: healthServer.url }, 'worker health and metrics');

  let stopping: Promise<void> | null = null;
  const shutdown = (graceMs: number) => {
    stopping ??= (async () => {
      draining.begin();
      if (http) {
        log.info({ graceMs, inFlight: http.inFlight }, 'shutting down: new requests are refused, those in flight may finish');
        await http.drain({
          graceMs,
          cutStreams: () => {
            const cut = streamRegistry.cutAll(new ServiceUnavailableError(
              'The server shut down before this stream finished: it was cut short here, and only what was generated is charged.',
              { code: 'server_shutting_down', retryAfterSeconds: 1 },
            ));
            if (cut > 0) log.warn({ streams: cut }, 'grace period over: streams still running are cut');
          },
        });
      }
      // The API first: its streams and requests end before the workers whose workflows wait for them.
      for (const { worker: w, run } of running) {
        if (w.getState() === 'RUNNING') w.shutdown();
        await run;
      }
      await temporal.connection.close().catch(() => undefined);
      await tracing?.stop();
      await closeCounters();
      await closeDeployments();
      unobserveCharges?.();
      await db.destroy();
      await healthServer?.close();
      log.info('stopped');
    })();
    return stopping;
  };
  return {
    db, temporal, storage, catalog, providers, http, worker, metrics, operatorToken, draining,
    workerMetricsUrl: healthServer && metrics ? `${healthServer.url}/metrics` : null,
    workerHealthUrl: healthServer?.url ?? null,
    publicUrl: opts.config.publicUrl ?? (http ? listenUrl(http) : null),
    shutdown: (graceMs = shutdownGraceMs) => shutdown(graceMs),
    stop: () => shutdown(10_000),
  };
}

/**
 * The deployments file's models checked against the catalog (a typo stops the boot, naming its line), and
 * their routing state shared with every other process: in Redis when configured, else in Postgres. Nothing
 * without a deployments file. Returns what closes the Redis connection.
 */
async function shareDeploymentState(providers: ProviderRegistry, catalog: ModelCatalog, config: GatewayConfig, db: Db, log: Logger): Promise<() => Promise<void>> {
  const deployments = providers.deployments;
  if (!deployments) return async () => undefined;
  await checkDeployedModels(deployments, catalog);
  const postgres = new PostgresDeploymentState(db);
  if (!config.redis) {
    deployments.useState(postgres);
    return async () => undefined;
  }
  const redis = connectRedisCounters(config.redis.url, { keyPrefix: config.redis.keyPrefix, log });
  if (!(await redis.connected(3000))) log.warn('Redis (deployment state) did not answer at start: routing by Postgres until it does');
  deployments.useState(new RedisDeploymentState(redis, postgres, { log }));
  log.info({ file: deployments.path, models: deployments.modelIds.length }, 'deployments: models served by several deployments');
  return () => redis.close();
}

/** The port a worker alone answers probes on when WORKER_HEALTH_PORT is not set (Prometheus' usual exporter port). */
const DEFAULT_WORKER_HEALTH_PORT = 9464;

/**
 * A worker alone's /livez, /readyz and /metrics: on WORKER_METRICS_PORT when set (where its metrics were), else
 * WORKER_HEALTH_PORT, else 9464 (a free port, said in the log, when another process on the machine has it).
 */
async function serveHealth(config: GatewayConfig, opts: Omit<Parameters<typeof serveWorkerEndpoints>[0], 'host' | 'port'> & { log: Logger }): ReturnType<typeof serveWorkerEndpoints> {
  const chosen = config.workerMetricsPort ?? config.workerHealthPort;
  const serve = (port: number) => serveWorkerEndpoints({ ...opts, host: config.host, port });
  if (chosen !== undefined) return serve(chosen);
  try {
    return await serve(DEFAULT_WORKER_HEALTH_PORT);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    opts.log.warn({ port: DEFAULT_WORKER_HEALTH_PORT }, 'the default health port is taken: probes and metrics on a free port (set WORKER_HEALTH_PORT)');
    return serve(0);
  }
}

/** The API's own address as people on this machine reach it (a wildcard listen address as loopback). */
function listenUrl(http: HttpServerHandle | null): string {
  if (!http) throw new Error('the API is not listening yet');
  const url = new URL(http.url);
  if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = '127.0.0.1';
  return url.origin;
}

/**
 * The one store of every window counter: Redis when configured (Postgres while it is unavailable), else
 * Postgres. Postgres counters have a small pool of their own whose commits do not wait for the WAL flush
 * (synchronous_commit=off): a hit then costs a round trip, not a disk sync, and a Postgres crash can lose
 * at most the last fraction of a second of counts (never any other data).
 */
async function windowCounters(config: GatewayConfig, databaseUrl: string, log: Logger): Promise<{ counters: WindowCounters; close(): Promise<void> }> {
  const countersDb = createDb(databaseUrl, { poolMax: 8, applicationName: 'gateway-counters', settings: { synchronous_commit: 'off' } });
  const postgres = new PostgresWindowCounters(countersDb);
  if (!config.redis) return { counters: postgres, close: () => countersDb.destroy() };
  const redis = connectRedisCounters(config.redis.url, { keyPrefix: config.redis.keyPrefix, log });
  // Not a reason to refuse to start: the counts go to Postgres until Redis answers.
  if (!(await redis.connected(3000))) log.warn('Redis (window counters) did not answer at start: counting in Postgres until it does');
  return {
    counters: new RedisWindowCounters(redis, postgres, { log }),
    close: async () => {
      await redis.close();
      await countersDb.destroy();
    },
  };
}

/** The dev server registers our search attributes at start; another cluster gets them here, once. */
async function ensureSearchAttributes(temporal: TemporalHandles, log: Logger): Promise<void> {
  try {
    const existing = await temporal.connection.operatorService.listSearchAttributes({ namespace: temporal.namespace });
    const missing = GATEWAY_SEARCH_ATTRIBUTES.filter((k) => !existing.customAttributes?.[k.name]);
    if (missing.length === 0) return;
    await temporal.connection.operatorService.addSearchAttributes({
      namespace: temporal.namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
    });
    log.info({ added: missing.map((k) => k.name) }, 'registered search attributes');
  } catch (err) {
    log.warn({ err }, 'could not check or register search attributes; register GatewayRequestId, GatewayWorkspaceId, GatewayApiKeyId, GatewayModel, GatewayEndpoint (Keyword) on the namespace');
  }
}
