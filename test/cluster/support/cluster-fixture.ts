/**
 * The cluster suite's gateway: the Temporal server on Postgres (mutual TLS on its frontend), MinIO, a fresh
 * gateway database and the Temporal cluster's two, two API processes and two worker processes
 * (stack/gateway-cluster.ts); tenants whose requests go to either API, each request from an address of its own
 * unless one is named (the per-IP safety net is 5 requests here); and the database cut for the cluster's own
 * databases only (the machine's Postgres serves others).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { Client as PgClient } from 'pg';
import { Client } from '@temporalio/client';
import { loadConfig } from '../../../config/env';
import { createApiKey, createWorkspace, type ApiKeyQuotas } from '../../../domain/workspaces';
import { GatewayCluster } from '../../../stack/gateway-cluster';
import { ensureGoTool, MINIO, TEMPORAL_SERVER, TEMPORAL_SQL_TOOL } from '../../../stack/go-tools';
import { createDatabaseIfMissing, dropDatabase } from '../../../stack/postgres';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
/** The per-IP safety net of the cluster's APIs (IP_RATE_LIMIT). */
export const IP_LIMIT = 5;

export interface ClusterTenant {
  workspaceId: string;
  keyId: string;
  key: string;
  /** A request to API number `api` (0 or 1), from a fresh client address unless `ip` names one. */
  fetch(api: number, path: string, init?: RequestInit & { ip?: string }): Promise<Response>;
}

let nextAddress = 0;
/** A client address no other request of this run used (198.18.0.0/15, the benchmarking range). */
function freshAddress(): string {
  nextAddress++;
  return `198.${18 + (nextAddress >> 16)}.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

export class ClusterFixture {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-cluster-'));
  readonly suffix = `${process.pid}_${Date.now().toString(36)}`;
  readonly dbName = `gateway_cl_${this.suffix}`;
  readonly databaseUrl = `postgres://postgres@127.0.0.1:5432/${this.dbName}`;
  readonly temporalPrefix = `temporal_cl_${this.suffix}`;
  readonly simulatorDir = path.join(this.dir, 'simulator');
  cluster!: GatewayCluster;
  temporal!: Client;
  private knex: Knex | null = null;

  static async start(): Promise<ClusterFixture> {
    const fixture = new ClusterFixture();
    const { cacheDir } = loadConfig();
    await createDatabaseIfMissing(ADMIN_URL, fixture.dbName);
    try {
      fixture.cluster = await GatewayCluster.start({
        binaries: {
          temporalServer: ensureGoTool(TEMPORAL_SERVER, cacheDir), temporalSqlTool: ensureGoTool(TEMPORAL_SQL_TOOL, cacheDir), minio: ensureGoTool(MINIO, cacheDir),
        },
        databaseUrl: fixture.databaseUrl, temporalDatabasePrefix: fixture.temporalPrefix, dir: path.join(fixture.dir, 'cluster'),
        apis: 2, workers: 2, tls: 'mutual',
        env: {
          LOG_LEVEL: 'warn', IP_RATE_LIMIT: String(IP_LIMIT), TRUST_PROXY: 'true',
          GATEWAY_HOLD_SWEEP_SECONDS: '3', GATEWAY_HOLD_SWEEP_MIN_AGE_SECONDS: '0', GATEWAY_OUTCOME_WAIT_SECONDS: '60',
          SIMULATED_STATE_DIR: fixture.simulatorDir, SIMULATED_VIDEO_MS: '3000', SIMULATED_STREAM_DELAY_MS: '100',
        },
      });
      fixture.temporal = new Client({ connection: await fixture.cluster.temporal.connect(), namespace: fixture.cluster.temporal.namespace });
    } catch (err) {
      await fixture.stop();
      throw err;
    }
    return fixture;
  }

  /** The test's own handle on the gateway database (dropped while Postgres is cut, made again on next use). */
  get db(): Knex {
    this.knex ??= knexFactory({ client: 'pg', connection: { connectionString: this.databaseUrl, application_name: 'cluster-test' }, pool: { min: 0, max: 4 } });
    return this.knex;
  }

  /** The cluster's databases: the gateway's and the Temporal server's two. */
  get databases(): string[] {
    const { persistence, visibility } = this.cluster.temporal.databases;
    return [this.dbName, persistence, visibility];
  }

  async newTenant(opts: { credits?: number; quotas?: ApiKeyQuotas } = {}): Promise<ClusterTenant> {
    const ws = await createWorkspace(this.db, { name: 'cluster', credits: opts.credits ?? 100, actor: 'test' });
    const key = await createApiKey(this.db, { workspaceId: ws.id, name: 'cluster', role: 'owner', quotas: opts.quotas, actor: 'test' });
    return {
      workspaceId: ws.id, keyId: key.id, key: key.key,
      fetch: (api, p, init = {}) => {
        const { ip, ...rest } = init;
        return fetch(`${this.cluster.apiUrl(api)}${p}`, {
          ...rest, headers: { authorization: `Bearer ${key.key}`, 'x-forwarded-for': ip ?? freshAddress(), ...(rest.headers ?? {}) },
        });
      },
    };
  }

  /** Postgres refuses the cluster's databases and drops every connection to them (nobody else's), until `restorePostgres`. */
  async cutPostgres(): Promise<void> {
    await this.knex?.destroy();
    this.knex = null;
    await this.admin(async (pg) => {
      for (const name of this.databases) await pg.query(`alter database ${name} allow_connections false`);
      await pg.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = any($1) and pid <> pg_backend_pid()', [this.databases]);
    });
  }

  async restorePostgres(): Promise<void> {
    await this.admin(async (pg) => {
      for (const name of this.databases) await pg.query(`alter database ${name} allow_connections true`);
    });
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

  async stop(): Promise<void> {
    await this.temporal?.connection.close().catch(() => undefined);
    await this.restorePostgres().catch(() => undefined);
    await this.cluster?.stop().catch(() => undefined);
    await this.knex?.destroy().catch(() => undefined);
    // By name: a cluster that failed to start may have made some of them.
    for (const name of [this.dbName, this.temporalPrefix, `${this.temporalPrefix}_visibility`]) await dropDatabase(ADMIN_URL, name).catch(() => undefined);
    if (!process.env.KEEP_CLUSTER_LOGS) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
