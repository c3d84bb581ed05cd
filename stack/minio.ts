/** Starts MinIO bound to 127.0.0.1 with its data in a project folder. */
import { isPortOpen, startProcess, waitUntil, type ManagedProcess } from './processes';

/** Credentials of the MinIO the project starts for itself (local only, bound to 127.0.0.1). */
export const MINIO_DEV_CREDENTIALS = { accessKeyId: 'gateway', secretAccessKey: 'gateway-dev-secret' };

export interface MinioServer {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  process: ManagedProcess;
}

export async function startMinio(opts: { binary: string; dataDir: string; port: number; consolePort: number; logFile: string; accessKeyId?: string; secretAccessKey?: string }): Promise<MinioServer> {
  const accessKeyId = opts.accessKeyId ?? MINIO_DEV_CREDENTIALS.accessKeyId;
  const secretAccessKey = opts.secretAccessKey ?? MINIO_DEV_CREDENTIALS.secretAccessKey;
  const proc = startProcess('minio', opts.binary, [
    'server', opts.dataDir,
    '--address', `127.0.0.1:${opts.port}`,
    '--console-address', `127.0.0.1:${opts.consolePort}`,
    '--quiet',
  ], {
    logFile: opts.logFile,
    env: { MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off', MINIO_CI_CD: '1' },
  });
  const endpoint = `http://127.0.0.1:${opts.port}`;
  await waitUntil('MinIO', async () => {
    if (!(await isPortOpen('127.0.0.1', opts.port))) return false;
    const res = await fetch(`${endpoint}/minio/health/live`);
    return res.ok;
  }, { timeoutMs: 60_000, proc });
  return { endpoint, accessKeyId, secretAccessKey, process: proc };
}
