/**
 * One Temporal connection per process. It is a NativeConnection so that, when the API and a worker share
 * the process, the client can start workflows eagerly on that worker (no matching round trip).
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { NativeConnection, Runtime, type LogLevel, type LogMetadata, type TLSConfig } from '@temporalio/worker';
import fs from 'node:fs';
import net from 'node:net';
import { log } from '../core/log';
import type { TemporalTlsConfig } from '../config/env';

let runtimeInstalled = false;
/** Where the SDK core serves its Prometheus metrics (null: not at all, or a runtime installed by someone else). */
let coreMetricsUrl: string | null = null;

/**
 * Routes the Temporal SDK's own logging into our logger. Activity failures are part of normal operation
 * (retries, fallbacks) and their outcome is logged by the gateway, so the SDK's notes about them go to debug.
 */
function installRuntime(metricsAddress: string | null): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // A runtime someone else installed first (a test environment in the same process) stays in charge.
  if (Runtime._instance) return;
  coreMetricsUrl = metricsAddress ? `http://${metricsAddress}/metrics` : null;
  const forward = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const target = level === 'ERROR' ? 'error' : level === 'WARN' && !/^(Activity failed|Workflow failed|No workflows registered|No activities registered)/.test(message) ? 'warn' : 'debug';
    log[target]({ temporal: meta }, message);
  };
  Runtime.install({
    // Our processes stop their workers themselves, in order (HTTP first, then workers, then connections).
    shutdownSignals: [],
    logger: {
      log: forward,
      trace: (m, meta) => forward('TRACE', m, meta),
      debug: (m, meta) => forward('DEBUG', m, meta),
      info: (m, meta) => forward('INFO', m, meta),
      warn: (m, meta) => forward('WARN', m, meta),
      error: (m, meta) => forward('ERROR', m, meta),
    },
    // The SDK core's own (Rust) logs go through the same logger instead of straight to stderr.
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress, useSecondsForDurations: true } } } : {}),
    },
  });
}

/** A free loopback address for the core's metrics endpoint (the core cannot report a port it chose itself). */
async function freeLoopbackAddress(): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(`127.0.0.1:${port}`));
    });
  });
}

export interface TemporalHandles {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  /** The encrypting data converter (infra/payload-codec.ts); workers on this connection use it too. */
  dataConverter: DataConverter;
  /** The SDK core's Prometheus endpoint in this process, if it serves one. */
  metricsUrl: string | null;
}

export interface TemporalTelemetry {
  /** Serve the SDK core's metrics (on `metricsAddress`, else a free loopback port). Decided by the first connection of a process. */
  metrics?: boolean;
  metricsAddress?: string;
  /** Propagate the active OpenTelemetry span into the workflows this client starts. */
  tracing?: boolean;
}

/**
 * How every connection to Temporal is secured (the gateway's, the CLI's, the benchmark's): TLS with the given CA,
 * server name and client certificate, and Temporal Cloud's API key; nothing without TLS configured. The files
 * are read at each connect, so a renewed certificate is picked up by the next connection.
 */
export function temporalConnectionOptions(tls: TemporalTlsConfig | undefined): { tls?: TLSConfig | boolean; apiKey?: string } {
  if (!tls) return {};
  const config: TLSConfig = {};
  if (tls.serverName) config.serverNameOverride = tls.serverName;
  if (tls.caPath) config.serverRootCACertificate = fs.readFileSync(tls.caPath);
  if (tls.certPath && tls.keyPath) config.clientCertPair = { crt: fs.readFileSync(tls.certPath), key: fs.readFileSync(tls.keyPath) };
  return { tls: Object.keys(config).length > 0 ? config : true, ...(tls.apiKey ? { apiKey: tls.apiKey } : {}) };
}

export async function connectTemporal(address: string, namespace: string, dataConverter: DataConverter, telemetry: TemporalTelemetry = {}, tls?: TemporalTlsConfig): Promise<TemporalHandles> {
  if (!runtimeInstalled) installRuntime(telemetry.metrics ? telemetry.metricsAddress ?? await freeLoopbackAddress() : null);
  const connection = await NativeConnection.connect({ address, ...temporalConnectionOptions(tls) });
  const client = new Client({
    connection, namespace, dataConverter,
    ...(telemetry.tracing ? { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } } : {}),
  });
  return { connection, client, namespace, dataConverter, metricsUrl: coreMetricsUrl };
}
