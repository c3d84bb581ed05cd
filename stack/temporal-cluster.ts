/**
 * A production-shaped Temporal cluster on this machine: the Temporal server built from its Go module, with
 * persistence and visibility in two databases of its own on PostgreSQL (schemas set up and upgraded by the
 * server's SQL tool from the module's schema files), the checked-in config (stack/temporal-cluster.yaml: 16
 * history shards, frontend, internal-frontend, history, matching and worker services in one process) and
 * dynamic config (stack/temporal-cluster-dynamic.yaml), the namespace and the gateway's search attributes, TLS
 * or mutual TLS on the frontend as an option, and the Temporal Web UI server pointed at it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import { Client as PgClient } from 'pg';
import { repoRoot } from '../core/paths';
import { temporalConnectionOptions } from '../infra/temporal';
import type { TemporalTlsConfig } from '../config/env';
import { GATEWAY_SEARCH_ATTRIBUTES } from '../workflows/contracts';
import { goModuleDir } from './go-tools';
import { freePort, isPortOpen, startProcess, waitUntil, type ManagedProcess } from './processes';
import { makeLocalCertificates, type LocalCertificates } from './tls-certs';

export const TEMPORAL_SERVER_MODULE = { path: 'go.temporal.io/server', version: 'v1.32.0' };
const CONFIG_FILE = path.join(repoRoot, 'stack', 'temporal-cluster.yaml');
const DYNAMIC_CONFIG_FILE = path.join(repoRoot, 'stack', 'temporal-cluster-dynamic.yaml');
const UI_CONFIG_DIR = path.join(repoRoot, 'stack', 'temporal-ui');
/** The services of the config file, all in the one server process (the internal frontend is not among the server's defaults). */
const SERVICES = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'];
/** The ports the server binds besides the frontend's gRPC port (see the config file's services). */
const SERVER_PORTS = [
  'FRONTEND_HTTP_PORT', 'FRONTEND_MEMBERSHIP_PORT', 'INTERNAL_FRONTEND_GRPC_PORT', 'INTERNAL_FRONTEND_HTTP_PORT', 'INTERNAL_FRONTEND_MEMBERSHIP_PORT',
  'HISTORY_GRPC_PORT', 'HISTORY_MEMBERSHIP_PORT', 'MATCHING_GRPC_PORT', 'MATCHING_MEMBERSHIP_PORT', 'WORKER_GRPC_PORT', 'WORKER_MEMBERSHIP_PORT',
] as const;

export interface TemporalClusterOptions {
  binaries: { server: string; sqlTool: string; ui?: string | null };
  /** A Postgres URL on the server that keeps the cluster's databases (any database; a superuser or one that may create databases). */
  postgresUrl: string;
  /** The cluster's databases: `<databasePrefix>` (persistence) and `<databasePrefix>_visibility`. */
  databasePrefix: string;
  /** Logs, certificates and the Web UI's config go here. */
  dir: string;
  /** The frontend's gRPC port (0: a free one) and the Web UI's (0: a free one; absent: no Web UI). */
  port: number;
  uiPort?: number;
  namespace?: string;
  /** How long the namespace keeps closed runs (the dev server's: 24 h). */
  retentionHours?: number;
  historyShards?: number;
  /** TLS on the frontend: server-authenticated, or mutual (clients need a certificate signed by the cluster's CA). */
  tls?: 'tls' | 'mutual';
  /** The gateway's codec endpoint, where the Web UI decodes the encrypted payloads. */
  codecEndpoint?: string;
  /** Connections the server may open per database (persistence; visibility gets half). */
  maxConns?: number;
  log?: (line: string) => void;
}

export class TemporalCluster {
  readonly namespace: string;
  readonly databases: { persistence: string; visibility: string };
  address = '';
  uiUrl: string | null = null;
  certificates: LocalCertificates | null = null;
  /** The frontend's port and the others the server binds, chosen once and kept across restarts. */
  private ports: Record<string, number> = {};
  private server: ManagedProcess | null = null;
  private ui: ManagedProcess | null = null;

  private constructor(private readonly opts: TemporalClusterOptions) {
    this.namespace = opts.namespace ?? 'default';
    this.databases = { persistence: opts.databasePrefix, visibility: `${opts.databasePrefix}_visibility` };
  }

  static async start(opts: TemporalClusterOptions): Promise<TemporalCluster> {
    const cluster = new TemporalCluster(opts);
    try {
      fs.mkdirSync(opts.dir, { recursive: true });
      if (opts.tls) cluster.certificates = makeLocalCertificates(path.join(opts.dir, 'certs'));
      await cluster.setUpDatabases();
      // Ports picked at random can be taken by someone else before the server binds them: once more on others.
      for (let attempt = 1; ; attempt++) {
        await cluster.choosePorts();
        try {
          await cluster.startServer();
          break;
        } catch (err) {
          if (attempt >= 3 || !/address already in use/i.test(String(err))) throw err;
        }
      }
      await cluster.registerNamespace();
      if (opts.binaries.ui && opts.uiPort !== undefined) await cluster.startUi();
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** What a gateway process needs to reach the cluster (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and the TLS variables). */
  clientEnv(): Record<string, string> {
    const env: Record<string, string> = { TEMPORAL_ADDRESS: this.address, TEMPORAL_NAMESPACE: this.namespace };
    const tls = this.clientTls();
    if (!tls) return env;
    env.TEMPORAL_TLS = 'true';
    if (tls.caPath) env.TEMPORAL_TLS_CA_PATH = tls.caPath;
    if (tls.serverName) env.TEMPORAL_TLS_SERVER_NAME = tls.serverName;
    if (tls.certPath && tls.keyPath) Object.assign(env, { TEMPORAL_TLS_CERT_PATH: tls.certPath, TEMPORAL_TLS_KEY_PATH: tls.keyPath });
    return env;
  }

  /** The client side of the frontend's TLS (the CA, the server's name and, for mutual TLS, the client certificate). */
  clientTls(): TemporalTlsConfig | undefined {
    const certs = this.certificates;
    if (!certs) return undefined;
    return {
      caPath: certs.caPath, serverName: certs.serverName,
      ...(this.opts.tls === 'mutual' ? { certPath: certs.clientCertPath, keyPath: certs.clientKeyPath } : {}),
    };
  }

  /** A client connection to the frontend (the caller closes it). */
  connect(): Promise<Connection> {
    return Connection.connect({ address: this.address, connectTimeout: '5 seconds', ...temporalConnectionOptions(this.clientTls()) });
  }

  private log(line: string): void {
    (this.opts.log ?? (() => undefined))(line);
  }

  private async choosePorts(): Promise<void> {
    const chosen = new Set<number>();
    // The server records membership ports in a smallint column: below 32768, where the system hands out none.
    const pick = async (fixed?: number) => {
      if (fixed) return fixed;
      for (;;) {
        const port = 10_000 + Math.floor(Math.random() * 22_000);
        if (!chosen.has(port) && (await canBind(port))) {
          chosen.add(port);
          return port;
        }
      }
    };
    this.ports = { FRONTEND_GRPC_PORT: await pick(this.opts.port) };
    for (const name of SERVER_PORTS) this.ports[name] = await pick();
    this.address = `127.0.0.1:${this.ports.FRONTEND_GRPC_PORT}`;
  }

  /** Creates the two databases when missing, then sets up (first time) and upgrades their schemas with the SQL tool. */
  private async setUpDatabases(): Promise<void> {
    const url = new URL(this.opts.postgresUrl);
    const schemaRoot = path.join(goModuleDir(TEMPORAL_SERVER_MODULE.path, TEMPORAL_SERVER_MODULE.version), 'schema', 'postgresql', 'v12');
    const common = [
      '--plugin', 'postgres12_pgx', '--endpoint', url.hostname, '--port', url.port || '5432',
      '--user', decodeURIComponent(url.username || 'postgres'), '--password', decodeURIComponent(url.password),
    ];
    for (const [kind, database] of [['temporal', this.databases.persistence], ['visibility', this.databases.visibility]] as const) {
      const tool = (...args: string[]) => execFileSync(this.opts.binaries.sqlTool, [...common, '--database', database, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      if (!(await this.databaseExists(database))) {
        this.log(`[cluster] creating database ${database} and its schema ...`);
        tool('create-database');
      }
      if (!(await this.hasSchema(database))) tool('setup-schema', '--version', '0.0');
      tool('update-schema', '--schema-dir', path.join(schemaRoot, kind, 'versioned'));
    }
  }

  private async admin<T>(database: string, work: (pg: PgClient) => Promise<T>): Promise<T> {
    const url = new URL(this.opts.postgresUrl);
    url.pathname = `/${database}`;
    const pg = new PgClient({ connectionString: url.toString() });
    await pg.connect();
    try {
      return await work(pg);
    } finally {
      await pg.end();
    }
  }

  private databaseExists(database: string): Promise<boolean> {
    return this.admin('postgres', async (pg) => (await pg.query('select 1 from pg_database where datname = $1', [database])).rowCount === 1);
  }

  private hasSchema(database: string): Promise<boolean> {
    return this.admin(database, async (pg) => (await pg.query(`select to_regclass('public.schema_version') is not null as present`)).rows[0].present as boolean);
  }

  /** Starts the server on the chosen ports (again after `killServer`, on the same ones) and waits until its frontend answers. */
  async startServer(): Promise<void> {
    const url = new URL(this.opts.postgresUrl);
    const certs = this.certificates;
    const maxConns = this.opts.maxConns ?? 20;
    const env: Record<string, string> = {
      ...Object.fromEntries(Object.entries(this.ports).map(([k, v]) => [k, String(v)])),
      BIND_ON_IP: '127.0.0.1', LOG_LEVEL: process.env.TEMPORAL_SERVER_LOG_LEVEL ?? 'warn',
      NUM_HISTORY_SHARDS: String(this.opts.historyShards ?? 16),
      POSTGRES_SEEDS: url.hostname, DB_PORT: url.port || '5432',
      POSTGRES_USER: decodeURIComponent(url.username || 'postgres'), POSTGRES_PWD: decodeURIComponent(url.password),
      DBNAME: this.databases.persistence, VISIBILITY_DBNAME: this.databases.visibility,
      SQL_MAX_CONNS: String(maxConns), SQL_VIS_MAX_CONNS: String(Math.max(2, Math.ceil(maxConns / 2))),
      DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
      ...(certs ? { TEMPORAL_TLS_FRONTEND_CERT: certs.serverCertPath, TEMPORAL_TLS_FRONTEND_KEY: certs.serverKeyPath } : {}),
      ...(certs && this.opts.tls === 'mutual' ? { TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true', TEMPORAL_TLS_CLIENT_CA_CERT: certs.caPath } : {}),
    };
    const logFile = path.join(this.opts.dir, 'logs', 'temporal-server.log');
    const before = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    const proc = startProcess('temporal-server', this.opts.binaries.server, ['--config-file', CONFIG_FILE, '--allow-no-auth', 'start', ...SERVICES.flatMap((name) => ['--service', name])], { logFile, env });
    this.server = proc;
    try {
      await waitUntil('the Temporal server', () => this.answers(), { timeoutMs: 120_000, proc });
    } catch (err) {
      await proc.stop();
      this.server = null;
      const tail = fs.readFileSync(logFile, 'utf8').slice(before);
      throw new Error(/address already in use/.test(tail) ? `the Temporal server: address already in use\n${tail.slice(-2000)}` : String(err));
    }
  }

  /** Whether the frontend answers and its history shards are owned (a call that needs them succeeds). */
  private async answers(): Promise<boolean> {
    if (!(await isPortOpen('127.0.0.1', this.ports.FRONTEND_GRPC_PORT))) return false;
    const connection = await this.connect();
    try {
      await connection.workflowService.getSystemInfo({});
      return true;
    } finally {
      await connection.close();
    }
  }

  /** The namespace (when missing) and the gateway's search attributes (those missing), then waits until both are in use. */
  private async registerNamespace(): Promise<void> {
    const connection = await this.connect();
    try {
      const service = connection.workflowService;
      const exists = await service.describeNamespace({ namespace: this.namespace }).then(() => true, () => false);
      if (!exists) {
        await service.registerNamespace({
          namespace: this.namespace,
          workflowExecutionRetentionPeriod: msToTs((this.opts.retentionHours ?? 24) * 3600_000),
        });
      }
      // In use once the frontend's namespace cache has it (refreshed every few seconds).
      await waitUntil(`the namespace ${this.namespace}`, () => connection.operatorService.listSearchAttributes({ namespace: this.namespace }).then(() => true), { timeoutMs: 60_000 });
      const wanted = async () => {
        const existing = await connection.operatorService.listSearchAttributes({ namespace: this.namespace });
        return GATEWAY_SEARCH_ATTRIBUTES.filter((k) => !existing.customAttributes?.[k.name]);
      };
      const missing = await wanted();
      if (missing.length > 0) {
        await connection.operatorService.addSearchAttributes({
          namespace: this.namespace,
          searchAttributes: Object.fromEntries(missing.map((k) => [k.name, proto.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
        });
      }
      await waitUntil('the search attributes', async () => (await wanted()).length === 0, { timeoutMs: 60_000 });
      // The namespace is usable once a visibility query on it is (the frontend's namespace cache has it).
      await waitUntil('the namespace to serve queries', () => service.countWorkflowExecutions({ namespace: this.namespace, query: '' }).then(() => true), { timeoutMs: 60_000 });
    } finally {
      await connection.close();
    }
  }

  /** The Temporal Web UI server pointed at the frontend (with the cluster's CA and client certificate under TLS). */
  private async startUi(): Promise<void> {
    const port = this.opts.uiPort || await freePort();
    const certs = this.certificates;
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: this.address, TEMPORAL_UI_PORT: String(port), TEMPORAL_DEFAULT_NAMESPACE: this.namespace,
      TEMPORAL_CODEC_ENDPOINT: this.opts.codecEndpoint ?? '',
      TEMPORAL_CORS_ORIGINS: `http://127.0.0.1:${port},http://localhost:${port}`,
      ...(certs ? { TEMPORAL_TLS_CA: certs.caPath, TEMPORAL_TLS_SERVER_NAME: certs.serverName, TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true' } : {}),
      ...(certs && this.opts.tls === 'mutual' ? { TEMPORAL_TLS_CERT: certs.clientCertPath, TEMPORAL_TLS_KEY: certs.clientKeyPath } : {}),
    };
    const proc = startProcess('temporal-ui-server', this.opts.binaries.ui!, ['--root', UI_CONFIG_DIR, '--config', '.', '--env', 'cluster', 'start'], {
      logFile: path.join(this.opts.dir, 'logs', 'temporal-ui.log'), env,
    });
    this.ui = proc;
    await waitUntil('the Temporal Web UI', () => isPortOpen('127.0.0.1', port), { timeoutMs: 30_000, proc });
    this.uiUrl = `http://127.0.0.1:${port}`;
  }

  /** The server program's pid (under the shell that watches it), for measuring its CPU; null when it is not running. */
  serverPid(): number | null {
    const wrapper = this.server?.child.pid;
    if (!wrapper) return null;
    try {
      const children = fs.readFileSync(`/proc/${wrapper}/task/${wrapper}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      return children.find((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === this.opts.binaries.server) ?? null;
    } catch {
      return null;
    }
  }

  /** kill -9 of the server process (its state stays in Postgres). */
  async killServer(): Promise<void> {
    const proc = this.server;
    this.server = null;
    if (!proc || proc.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()));
    // The wrapper's process group: the server and the shell watching it.
    process.kill(-proc.child.pid!, 'SIGKILL');
    await exited;
    await proc.stop();
  }

  async stopServer(): Promise<void> {
    await this.server?.stop();
    this.server = null;
  }

  /** Stops the Web UI and the server; `dropDatabases` also drops the cluster's two databases (a test's). */
  async stop(opts: { dropDatabases?: boolean } = {}): Promise<void> {
    await this.ui?.stop();
    this.ui = null;
    await this.stopServer();
    if (!opts.dropDatabases) return;
    for (const database of [this.databases.persistence, this.databases.visibility]) {
      await this.admin('postgres', (pg) => pg.query(`drop database if exists ${quoteIdent(database)} with (force)`)).catch((err) => this.log(`[cluster] could not drop ${database}: ${err}`));
    }
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
