/**
 * The gateway in its production shape on one machine: the Temporal cluster (stack/temporal-cluster.ts), MinIO,
 * a Postgres database, and several API processes and worker processes (`node dist/main/api.js`, `node
 * dist/main/worker.js`, with the settings `npm start` gives a gateway process), each on a port of its own and
 * logging to a file. `npm run cluster` and the cluster suite (test/cluster) start it; every process can be
 * killed (SIGKILL) or stopped and started again on the same address.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../core/paths';
import { MINIO_DEV_CREDENTIALS, startMinio } from './minio';
import { freePort, startProcess, waitUntil, type ManagedProcess } from './processes';
import { TemporalCluster } from './temporal-cluster';

const { GATEWAY_NODE_FLAGS, GATEWAY_ENV } = require(path.join(repoRoot, 'scripts', 'bootstrap.js')) as { GATEWAY_NODE_FLAGS: string[]; GATEWAY_ENV: Record<string, string> };

export type GatewayRole = 'api' | 'worker';

export interface GatewayClusterOptions {
  binaries: { temporalServer: string; temporalSqlTool: string; temporalUi?: string | null; minio: string };
  /** The gateway's database (it exists); the Temporal cluster's two databases go on the same server. */
  databaseUrl: string;
  /** Prefix of the Temporal cluster's databases. */
  temporalDatabasePrefix: string;
  /** Logs, MinIO's data, certificates. */
  dir: string;
  apis: number;
  workers: number;
  /** Fixed ports (dev), else free ones: the Temporal frontend, its Web UI (absent: no UI), MinIO, the first API (the others follow it). */
  ports?: { temporal: number; temporalUi?: number; minio: number; api: number };
  /** Run the Web UI on a free port (tests leave it out). */
  temporalUi?: boolean;
  tls?: 'tls' | 'mutual';
  /** The secrets every process shares (kept by `npm run cluster` across runs: histories stay readable); absent: new ones. */
  secrets?: ClusterSecrets;
  /** Environment of every gateway process (on top of the cluster's own). */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface ClusterSecrets {
  TEMPORAL_CODEC_KEYS: string;
  OPERATOR_TOKEN: string;
  CAPTCHA_SECRET: string;
}

export function newClusterSecrets(): ClusterSecrets {
  return {
    TEMPORAL_CODEC_KEYS: `cluster:${randomBytes(32).toString('base64')}`,
    OPERATOR_TOKEN: randomBytes(24).toString('hex'),
    CAPTCHA_SECRET: randomBytes(32).toString('hex'),
  };
}

interface Part {
  proc: ManagedProcess;
  url: string | null;
}

export class GatewayCluster {
  temporal!: TemporalCluster;
  s3Endpoint = '';
  /** Shared by every process: the payload codec key, the operator token and the CAPTCHA secret. */
  readonly secrets: ClusterSecrets;
  private minio: ManagedProcess | null = null;
  private readonly parts: Record<GatewayRole, Array<Part | null>> = { api: [], worker: [] };
  private apiPorts: number[] = [];

  private constructor(private readonly opts: GatewayClusterOptions) {
    this.secrets = opts.secrets ?? newClusterSecrets();
  }

  static async start(opts: GatewayClusterOptions): Promise<GatewayCluster> {
    const cluster = new GatewayCluster(opts);
    const log = opts.log ?? (() => undefined);
    try {
      fs.mkdirSync(opts.dir, { recursive: true });
      const ports = opts.ports;
      const [temporal] = await Promise.all([
        TemporalCluster.start({
          binaries: { server: opts.binaries.temporalServer, sqlTool: opts.binaries.temporalSqlTool, ui: opts.binaries.temporalUi },
          postgresUrl: opts.databaseUrl, databasePrefix: opts.temporalDatabasePrefix, dir: path.join(opts.dir, 'temporal'),
          port: ports?.temporal ?? 0, uiPort: ports?.temporalUi ?? (opts.temporalUi ? 0 : undefined), tls: opts.tls,
          // Both API processes serve the same codec; the UI asks the first.
          codecEndpoint: ports ? `http://127.0.0.1:${ports.api}/codec` : undefined, log,
        }),
        cluster.startMinio(ports?.minio),
      ]);
      cluster.temporal = temporal;
      log(`[cluster] Temporal: ${temporal.address}${opts.tls ? ` (${opts.tls === 'mutual' ? 'mutual TLS' : 'TLS'})` : ''}, databases ${temporal.databases.persistence}, ${temporal.databases.visibility}`);
      for (let i = 0; i < opts.apis; i++) cluster.apiPorts.push(ports ? ports.api + i : await freePort());
      // The first worker migrates the database alone; the other processes then start side by side.
      if (opts.workers > 0) await cluster.start('worker', 0);
      await Promise.all([
        ...Array.from({ length: opts.workers - 1 }, (_, i) => cluster.start('worker', i + 1)),
        ...Array.from({ length: opts.apis }, (_, i) => cluster.start('api', i)),
      ]);
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** The environment of a gateway process: the stores, the shared secrets, small Postgres pools (see docs/cluster.md). */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      HOST: '127.0.0.1', DATABASE_URL: this.opts.databaseUrl, ...this.temporal.clientEnv(),
      S3_ENDPOINT: this.s3Endpoint, S3_ACCESS_KEY_ID: MINIO_DEV_CREDENTIALS.accessKeyId, S3_SECRET_ACCESS_KEY: MINIO_DEV_CREDENTIALS.secretAccessKey, S3_BUCKET: 'gateway',
      DATABASE_POOL_MAX: '10', ...this.secrets,
      ...this.opts.env, ...extra,
    };
  }

  private async startMinio(port?: number): Promise<void> {
    const [minioPort, consolePort] = port ? [port, port + 1] : [await freePort(), await freePort()];
    const minio = await startMinio({
      binary: this.opts.binaries.minio, dataDir: path.join(this.opts.dir, 'minio'), port: minioPort, consolePort, logFile: path.join(this.opts.dir, 'logs', 'minio.log'),
    });
    this.minio = minio.process;
    this.s3Endpoint = minio.endpoint;
  }

  /** Starts API or worker number `index` (again on its address after a kill) and waits until it serves. */
  async start(role: GatewayRole, index: number, extra: NodeJS.ProcessEnv = {}): Promise<void> {
    const name = `${role}-${index + 1}`;
    const logFile = path.join(this.opts.dir, 'logs', `${name}.log`);
    const before = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    const env = this.env({ ...(role === 'api' ? { PORT: String(this.apiPorts[index]) } : {}), ...extra });
    const proc = startProcess(name, process.execPath, [...GATEWAY_NODE_FLAGS, path.join(repoRoot, 'dist', 'main', `${role}.js`)], {
      logFile, env: { ...env, ...GATEWAY_ENV }, cwd: repoRoot,
    });
    this.parts[role][index] = { proc, url: null };
    const ready = role === 'worker' ? /\[worker\] polling task queue/ : /\[api\] listening on (http:\/\/\S+)\/v1/;
    let match: RegExpExecArray | null = null;
    await waitUntil(`the ${name} process`, async () => {
      match = ready.exec(fs.readFileSync(logFile, 'utf8').slice(before));
      return match !== null;
    }, { timeoutMs: 120_000, proc });
    this.parts[role][index] = { proc, url: role === 'api' ? match![1] : null };
  }

  /** The base URL (no `/v1`) of API number `index`. */
  apiUrl(index: number): string {
    const url = this.parts.api[index]?.url;
    if (!url) throw new Error(`api-${index + 1} is not running`);
    return url;
  }

  get apiCount(): number {
    return this.opts.apis;
  }

  get logDir(): string {
    return path.join(this.opts.dir, 'logs');
  }

  /** kill -9 of a gateway process (and the shell watching it): nothing of it runs its shutdown. */
  async kill(role: GatewayRole, index: number): Promise<void> {
    const part = this.parts[role][index];
    this.parts[role][index] = null;
    if (!part || part.proc.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => part.proc.child.once('exit', () => resolve()));
    process.kill(-part.proc.child.pid!, 'SIGKILL');
    await exited;
    await part.proc.stop();
  }

  async stopPart(role: GatewayRole, index: number): Promise<void> {
    const part = this.parts[role][index];
    this.parts[role][index] = null;
    await part?.proc.stop();
  }

  /** Stops the gateway processes (APIs first), MinIO and the Temporal cluster; `dropTemporalDatabases` for a test's. */
  async stop(opts: { dropTemporalDatabases?: boolean } = {}): Promise<void> {
    for (const role of ['api', 'worker'] as const) {
      await Promise.all(this.parts[role].map((_, i) => this.stopPart(role, i).catch(() => undefined)));
    }
    await this.minio?.stop().catch(() => undefined);
    this.minio = null;
    await this.temporal?.stop({ dropDatabases: opts.dropTemporalDatabases });
  }
}
