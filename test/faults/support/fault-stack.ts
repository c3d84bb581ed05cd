/**
 * A gateway as separate processes, for breaking its parts one at a time: a Temporal dev server keeping its
 * state in a SQLite file, MinIO, a fresh Postgres database on the local server, and the API and the worker
 * each in a process of its own (`node dist/main/api.js`, `node dist/main/worker.js`); on demand also an API
 * and worker in one process (`node dist/main/api-worker.js`, the shape `npm start` runs) on an address of its
 * own. Every part can be killed (SIGKILL, by the pid this module started) or stopped, and started again on
 * the same address.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../../../config/env';
import { repoRoot } from '../../../core/paths';
import { createApiKey, createWorkspace, type ApiKeyQuotas } from '../../../domain/workspaces';
import { ensureGoTool, MINIO, TEMPORAL_CLI } from '../../../stack/go-tools';
import { MINIO_DEV_CREDENTIALS, startMinio } from '../../../stack/minio';
import { createDatabaseIfMissing, dropDatabase } from '../../../stack/postgres';
import { freePort, startProcess, waitUntil, type ManagedProcess } from '../../../stack/processes';
import { startTemporalDevServer } from '../../../stack/temporal';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const { GATEWAY_NODE_FLAGS, GATEWAY_ENV } = require(path.join(repoRoot, 'scripts', 'bootstrap.js')) as { GATEWAY_NODE_FLAGS: string[]; GATEWAY_ENV: Record<string, string> };

export interface FaultTenant {
  workspaceId: string;
  keyId: string;
  key: string;
  /** fetch against the API process with this tenant's key. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** The same against another gateway process (base URL `at`). */
  fetchAt(at: string, path: string, init?: RequestInit): Promise<Response>;
}

/** The pid of the program a watchdog wrapper (stack/processes.ts) runs: the one to SIGKILL. */
function programPid(wrapper: ManagedProcess, program: string): number {
  const wrapperPid = wrapper.child.pid!;
  const children = fs.readFileSync(`/proc/${wrapperPid}/task/${wrapperPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  for (const pid of children) {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv.some((arg) => arg.endsWith(program))) return pid;
  }
  throw new Error(`no ${program} under process ${wrapperPid}`);
}

async function killHard(wrapper: ManagedProcess, program: string): Promise<void> {
  const pid = programPid(wrapper, program);
  const exited = new Promise<void>((resolve) => {
    if (wrapper.child.exitCode !== null) resolve();
    else wrapper.child.once('exit', () => resolve());
  });
  process.kill(pid, 'SIGKILL');
  await exited;
  await wrapper.stop(); // forgets it (already gone)
}

export class FaultStack {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-faults-'));
  readonly dbName = `gateway_faults_${process.pid}_${Date.now().toString(36)}`;
  readonly databaseUrl = `postgres://postgres@127.0.0.1:5432/${this.dbName}`;
  /** What the simulated provider remembers (video submissions), shared by every worker process. */
  readonly simulatorDir = path.join(this.dir, 'simulator');
  apiUrl = '';
  /** The combined API+worker process's base URL, while it runs. */
  apiWorkerUrl = '';
  private knex: Knex | null = null;
  private ports!: { temporal: number; temporalUi: number; minio: number; minioConsole: number; api: number; apiWorker: number; workerHealth: number };
  private temporal: ManagedProcess | null = null;
  private minio: ManagedProcess | null = null;
  private api: ManagedProcess | null = null;
  private worker: ManagedProcess | null = null;
  private apiWorker: ManagedProcess | null = null;
  private readonly tools = (() => {
    const { cacheDir } = loadConfig();
    return { temporal: ensureGoTool(TEMPORAL_CLI, cacheDir), minio: ensureGoTool(MINIO, cacheDir) };
  })();

  static async start(): Promise<FaultStack> {
    const stack = new FaultStack();
    stack.ports = { temporal: await freePort(), temporalUi: await freePort(), minio: await freePort(), minioConsole: await freePort(), api: await freePort(), apiWorker: await freePort(), workerHealth: await freePort() };
    await createDatabaseIfMissing(ADMIN_URL, stack.dbName);
    await Promise.all([stack.startTemporal(), stack.startMinio()]);
    await stack.startWorker(); // migrates the database
    await stack.startApi();
    return stack;
  }

  /** Where the worker process answers /livez, /readyz and /metrics. */
  get workerHealthUrl(): string {
    return `http://127.0.0.1:${this.ports.workerHealth}`;
  }

  /**
   * Sends `signal` to a gateway process (the program, not its watchdog wrapper) and resolves with its exit code
   * once it exited; the part is then forgotten (start it again to have it back).
   */
  signal(part: 'api' | 'worker' | 'api-worker', signal: NodeJS.Signals): Promise<number | null> {
    const proc = part === 'api' ? this.api : part === 'worker' ? this.worker : this.apiWorker;
    if (!proc) throw new Error(`no ${part} process running`);
    const exited = new Promise<number | null>((resolve) => {
      if (proc.child.exitCode !== null) resolve(proc.child.exitCode);
      else proc.child.once('exit', (code) => resolve(code));
    });
    process.kill(programPid(proc, `${part}.js`), signal);
    return exited.then(async (code) => {
      await proc.stop(); // forgets it (already gone)
      if (part === 'api') this.api = null;
      else if (part === 'worker') this.worker = null;
      else this.apiWorker = null;
      return code;
    });
  }

  /** The test's own handle on the database (dropped while Postgres is blocked, made again on next use). */
  get db(): Knex {
    this.knex ??= knexFactory({ client: 'pg', connection: { connectionString: this.databaseUrl, application_name: 'fault-test' }, pool: { min: 0, max: 4 } });
    return this.knex;
  }

  /** The environment of the API and worker processes: short sweeper period, simulated provider slowed for streams, local webhooks allowed. */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {
      HOST: '127.0.0.1', PORT: String(this.ports.api), DATABASE_URL: this.databaseUrl, TEMPORAL_ADDRESS: `127.0.0.1:${this.ports.temporal}`,
      TEMPORAL_TASK_QUEUE: 'faults', S3_ENDPOINT: `http://127.0.0.1:${this.ports.minio}`, S3_ACCESS_KEY_ID: MINIO_DEV_CREDENTIALS.accessKeyId,
      S3_SECRET_ACCESS_KEY: MINIO_DEV_CREDENTIALS.secretAccessKey, S3_BUCKET: 'gateway', LOG_LEVEL: 'warn',
      GATEWAY_HOLD_SWEEP_SECONDS: '3', GATEWAY_HOLD_SWEEP_MIN_AGE_SECONDS: '0', GATEWAY_OUTCOME_WAIT_SECONDS: '60',
      WORKER_HEALTH_PORT: String(this.ports.workerHealth),
      SIMULATED_STATE_DIR: this.simulatorDir, SIMULATED_VIDEO_MS: '4000', SIMULATED_STREAM_DELAY_MS: '300',
      // Budget alert webhooks go to a local receiver.
      ALLOW_PRIVATE_WEBHOOKS: 'true',
      ...extra,
    };
  }

  async startTemporal(): Promise<void> {
    const server = await startTemporalDevServer({
      binary: this.tools.temporal, port: this.ports.temporal, uiPort: this.ports.temporalUi,
      dbFile: path.join(this.dir, 'temporal.sqlite'), logFile: path.join(this.dir, 'logs', 'temporal.log'),
    });
    this.temporal = server.process;
  }

  /** kill -9 of the Temporal server (its state stays in the SQLite file). */
  async killTemporal(): Promise<void> {
    await killHard(this.temporal!, 'temporal');
    this.temporal = null;
  }

  async startMinio(): Promise<void> {
    const minio = await startMinio({
      binary: this.tools.minio, dataDir: path.join(this.dir, 'minio'), port: this.ports.minio, consolePort: this.ports.minioConsole,
      logFile: path.join(this.dir, 'logs', 'minio.log'),
    });
    this.minio = minio.process;
  }

  async stopMinio(): Promise<void> {
    await this.minio?.stop();
    this.minio = null;
  }

  private async startGateway(part: 'api' | 'worker' | 'api-worker', extra: NodeJS.ProcessEnv): Promise<ManagedProcess> {
    const logFile = path.join(this.dir, 'logs', `${part}.log`);
    const before = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    // With the process settings `npm start` gives a gateway process (its sandbox preload included).
    const proc = startProcess(part, process.execPath, [...GATEWAY_NODE_FLAGS, path.join(repoRoot, 'dist', 'main', `${part}.js`)], {
      logFile, env: { ...this.env(extra), ...GATEWAY_ENV }, cwd: repoRoot,
    });
    const ready = part === 'worker' ? /\[worker\] polling task queue/ : new RegExp(`\\[${part}\\] listening on (http://\\S+)/v1`);
    let match: RegExpExecArray | null = null;
    await waitUntil(`the ${part} process`, async () => {
      match = ready.exec(fs.readFileSync(logFile, 'utf8').slice(before));
      return match !== null;
    }, { timeoutMs: 120_000, proc });
    if (part === 'api') this.apiUrl = match![1];
    if (part === 'api-worker') this.apiWorkerUrl = match![1];
    return proc;
  }

  /** An API and a worker in one process (runs start eagerly on it, first hops begin in it), on its own port. */
  async startApiWorker(extra: NodeJS.ProcessEnv = {}): Promise<void> {
    this.apiWorker = await this.onFreePort('apiWorker', () => this.startGateway('api-worker', { PORT: String(this.ports.apiWorker), ...extra }));
  }

  /**
   * Starts a listening part, moving it to another free port when its own was taken meanwhile (a port picked
   * at the stack's start may since have been bound by another process on the machine); clients read the
   * part's URL from its log, so the move is invisible to them.
   */
  private async onFreePort(port: 'api' | 'apiWorker', start: () => Promise<ManagedProcess>): Promise<ManagedProcess> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await start();
      } catch (err) {
        if (attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
        this.ports[port] = await freePort();
      }
    }
  }

  async killApiWorker(): Promise<void> {
    await killHard(this.apiWorker!, 'api-worker.js');
    this.apiWorker = null;
  }

  async stopApiWorker(): Promise<void> {
    await this.apiWorker?.stop();
    this.apiWorker = null;
  }

  async startApi(extra: NodeJS.ProcessEnv = {}): Promise<void> {
    this.api = await this.onFreePort('api', () => this.startGateway('api', extra));
  }

  async startWorker(extra: NodeJS.ProcessEnv = {}): Promise<void> {
    this.worker = await this.startGateway('worker', extra);
  }

  async killApi(): Promise<void> {
    await killHard(this.api!, 'api.js');
    this.api = null;
  }

  async killWorker(): Promise<void> {
    await killHard(this.worker!, 'worker.js');
    this.worker = null;
  }

  async stopApi(): Promise<void> {
    await this.api?.stop();
    this.api = null;
  }

  async stopWorker(): Promise<void> {
    await this.worker?.stop();
    this.worker = null;
  }

  /** The database refuses new connections and drops every open one (ours included), until `allowPostgres`. */
  async blockPostgres(): Promise<void> {
    await this.knex?.destroy();
    this.knex = null;
    await this.admin(async (pg) => {
      await pg.query(`alter database ${this.dbName} allow_connections false`);
      await pg.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [this.dbName]);
    });
  }

  async allowPostgres(): Promise<void> {
    await this.admin((pg) => pg.query(`alter database ${this.dbName} allow_connections true`));
  }

  private async admin<T>(work: (pg: PgClient) => Promise<T>): Promise<T> {
    const pg = new PgClient({ connectionString: ADMIN_URL });
    await pg.connect();
    try {
      return await work(pg);
    } finally {
      await pg.end();
    }
  }

  async newTenant(opts: { credits?: number; quotas?: ApiKeyQuotas } = {}): Promise<FaultTenant> {
    const ws = await createWorkspace(this.db, { name: 'faults', credits: opts.credits ?? 100, actor: 'test' });
    const key = await createApiKey(this.db, { workspaceId: ws.id, name: 'faults', role: 'owner', quotas: opts.quotas, actor: 'test' });
    return {
      workspaceId: ws.id, keyId: key.id, key: key.key,
      fetch: (p, init = {}) => fetch(`${this.apiUrl}${p}`, { ...init, headers: { authorization: `Bearer ${key.key}`, ...(init.headers ?? {}) } }),
      fetchAt: (at, p, init = {}) => fetch(`${at}${p}`, { ...init, headers: { authorization: `Bearer ${key.key}`, ...(init.headers ?? {}) } }),
    };
  }

  async stop(): Promise<void> {
    for (const proc of [this.api, this.apiWorker, this.worker, this.minio, this.temporal]) await proc?.stop().catch(() => undefined);
    await this.knex?.destroy().catch(() => undefined);
    await this.allowPostgres().catch(() => undefined);
    await dropDatabase(ADMIN_URL, this.dbName).catch(() => undefined);
    if (!process.env.KEEP_FAULT_LOGS) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
