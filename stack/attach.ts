/**
 * For the separate `api` and `worker` processes: the stores from the environment, or else the ones a
 * running `npm start` provides on this machine (same defaults), so scale-out works locally too.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { GatewayConfig } from '../config/env';
import type { StorageConfig } from '../infra/storage';
import { MINIO_DEV_CREDENTIALS } from './minio';

export interface AttachedStores {
  databaseUrl: string;
  temporalAddress: string;
  s3: StorageConfig;
}

export function attachToStores(config: GatewayConfig): AttachedStores {
  return {
    databaseUrl: config.databaseUrl ?? devDatabaseUrl(config.dataDir),
    temporalAddress: config.temporalAddress ?? '127.0.0.1:7233',
    s3: config.s3 ?? {
      endpoint: `http://127.0.0.1:${process.env.MINIO_PORT ?? 9000}`,
      region: 'us-east-1',
      ...MINIO_DEV_CREDENTIALS,
      bucket: 'gateway',
      forcePathStyle: true,
    },
  };
}

/** The database `npm start` uses: the local server's `gateway` database, or the embedded one's. */
export function devDatabaseUrl(dataDir: string): string {
  const portFile = path.join(dataDir, 'postgres.port');
  if (fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION')) && fs.existsSync(portFile)) {
    return `postgres://postgres:postgres@127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}/gateway`;
  }
  return 'postgres://postgres@127.0.0.1:5432/gateway';
}
