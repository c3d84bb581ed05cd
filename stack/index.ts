/**
 * Resolves the three stores the gateway needs. Each is the user's own when configured, else one the
 * project starts for itself, bound to 127.0.0.1, with progress printed as it goes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { GatewayConfig } from '../config/env';
import type { StorageConfig } from '../infra/storage';
import { ensureGoTool, MINIO, TEMPORAL_CLI } from './go-tools';
import { startMinio } from './minio';
import { ensurePostgres } from './postgres';
import { isPortOpen, onFreePorts } from './processes';
import { startTemporalDevServer } from './temporal';

export interface ResolvedStack {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  s3: StorageConfig;
  /** Stops what this call started (never the user's own services). */
  stop(): Promise<void>;
}

export interface StackOptions {
  /** `dev` keeps data in the project's data dir on fixed ports; `test` uses fresh temp dirs and free ports. */
  mode: 'dev' | 'test';
  dbName: string;
  /** Keep Temporal's state in a SQLite file even in `test` mode (benchmarks measure the durable setup). */
  persistTemporal?: boolean;
  /** Drop the database created on the machine's Postgres when the stack stops (a benchmark's own, say). */
  dropDatabase?: boolean;
  log?: (line: string) => void;
}

export async function resolveStack(config: GatewayConfig, opts: StackOptions): Promise<ResolvedStack> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch((err) => log(`[stack] stop failed: ${err}`));
  };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const dataDir = opts.mode === 'test' ? fs.mkdtempSync(path.join(config.dataDir, 'test-')) : config.dataDir;
  const logDir = path.join(dataDir, 'logs');

  try {
    // Building missing tools first (slow, once) so the servers start back to back afterwards.
    const temporalBinary = config.temporalAddress ? null : ensureGoTool(TEMPORAL_CLI, config.cacheDir, log);
    const minioBinary = config.s3 ? null : ensureGoTool(MINIO, config.cacheDir, log);

    const pg = await ensurePostgres({ databaseUrl: config.databaseUrl, dbName: opts.dbName, dataDir, log, dropOnStop: opts.dropDatabase });
    stops.push(pg.stop);
    log(`[stack] Postgres: ${redactUrl(pg.url)} (${pg.source})`);

    let temporalAddress = config.temporalAddress;
    let temporalUiUrl = config.temporalUiUrl ?? null;
    if (!temporalAddress) {
      const startOn = ([port, uiPort]: number[]) => startTemporalDevServer({
        binary: temporalBinary!, port, uiPort, logFile: path.join(logDir, 'temporal.log'),
        dbFile: opts.mode === 'dev' || opts.persistTemporal ? path.join(dataDir, 'temporal.sqlite') : undefined,
        // Test gateways listen on free ports of their own, so only the dev stack knows where the codec is.
        codecEndpoint: opts.mode === 'dev' ? codecEndpointUrl(config) : undefined,
      });
      if (opts.mode === 'dev' && (await isPortOpen('127.0.0.1', 7233))) {
        throw new Error('port 7233 is taken: another Temporal server runs there. Stop it, or set TEMPORAL_ADDRESS to use it.');
      }
      log('[stack] starting the Temporal dev server ...');
      const server = opts.mode === 'test' ? await onFreePorts(2, startOn) : await startOn([7233, Number(process.env.TEMPORAL_UI_PORT ?? 8233)]);
      stops.push(() => server.process.stop());
      temporalAddress = server.address;
      temporalUiUrl = server.uiUrl;
      log(`[stack] Temporal: ${temporalAddress}, Web UI ${temporalUiUrl}`);
    }

    let s3: StorageConfig;
    if (config.s3) {
      s3 = config.s3;
    } else {
      const startOn = ([port, consolePort]: number[]) => startMinio({ binary: minioBinary!, dataDir: path.join(dataDir, 'minio'), port, consolePort, logFile: path.join(logDir, 'minio.log') });
      const devPort = Number(process.env.MINIO_PORT ?? 9000);
      if (opts.mode === 'dev' && (await isPortOpen('127.0.0.1', devPort))) {
        throw new Error(`port ${devPort} is taken. Stop what runs there, set MINIO_PORT, or point S3_ENDPOINT at your own S3.`);
      }
      log('[stack] starting MinIO ...');
      const minio = opts.mode === 'test' ? await onFreePorts(2, startOn) : await startOn([devPort, devPort + 1]);
      stops.push(() => minio.process.stop());
      s3 = { endpoint: minio.endpoint, region: 'us-east-1', accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey, bucket: 'gateway', forcePathStyle: true };
      log(`[stack] S3 (MinIO): ${minio.endpoint}, bucket ${s3.bucket}`);
    }

    if (opts.mode === 'test') stops.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    return { databaseUrl: pg.url, temporalAddress, temporalUiUrl, s3, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The gateway's codec endpoint as a browser on this machine reaches it. */
export function codecEndpointUrl(config: Pick<GatewayConfig, 'host' | 'port'>): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}/codec`;
}

export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:****@');
}
