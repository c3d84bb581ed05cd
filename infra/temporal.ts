/**
 * One Temporal connection per process. It is a NativeConnection so that, when the API and a worker share
 * the process, the client can start workflows eagerly on that worker (no matching round trip).
 */
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { log } from '../core/log';

let runtimeInstalled = false;

/**
 * Routes the Temporal SDK's own logging into our logger. Activity failures are part of normal operation
 * (retries, fallbacks) and their outcome is logged by the gateway, so the SDK's notes about them go to debug.
 */
function installRuntimeLogger(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // A runtime someone else installed first (a test environment in the same process) stays in charge.
  if (Runtime._instance) return;
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
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
}

export interface TemporalHandles {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  /** The encrypting data converter (infra/payload-codec.ts); workers on this connection use it too. */
  dataConverter: DataConverter;
}

export async function connectTemporal(address: string, namespace: string, dataConverter: DataConverter): Promise<TemporalHandles> {
  installRuntimeLogger();
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection, namespace, dataConverter });
  return { connection, client, namespace, dataConverter };
}
