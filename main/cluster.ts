/**
 * `npm run cluster`: the gateway in its production shape on this machine. The Temporal server (built from its Go
 * module) on PostgreSQL with 16 history shards and its Web UI, MinIO, and two API processes and two worker
 * processes on ports of their own; prints where everything is, and stops all of it on Ctrl-C. See docs/cluster.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/env';
import { createDb } from '../db/connection';
import { ensureDevOwner, ensureDevWorkspace } from '../domain/dev-workspace';
import { microToCredits } from '../core/money';
import { getBalance } from '../domain/ledger';
import { GatewayCluster, newClusterSecrets, type ClusterSecrets } from '../stack/gateway-cluster';
import { ensureGoTool, MINIO, TEMPORAL_SERVER, TEMPORAL_SQL_TOOL, TEMPORAL_UI_SERVER } from '../stack/go-tools';
import { ensurePostgres } from '../stack/postgres';
import { isPortOpen, stopAllProcesses } from '../stack/processes';
import { redactUrl } from '../stack';

const env = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

async function main(): Promise<void> {
  const config = loadConfig();
  const log = (line: string) => console.log(line);
  const count = (name: string) => {
    const n = env(name, 2);
    if (!Number.isInteger(n) || n < 1 || n > 8) throw new Error(`${name} must be a whole number from 1 to 8`);
    return n;
  };
  const apis = count('CLUSTER_APIS');
  const workers = count('CLUSTER_WORKERS');
  const tls = process.env.CLUSTER_TLS === 'mutual' ? 'mutual' : process.env.CLUSTER_TLS === 'tls' ? 'tls' : undefined;
  const ports = { temporal: env('TEMPORAL_PORT', 7233), temporalUi: env('TEMPORAL_UI_PORT', 8233), minio: env('MINIO_PORT', 9000), api: config.port };
  for (const [what, port] of [['Temporal', ports.temporal], ['the Web UI', ports.temporalUi], ['MinIO', ports.minio], ...Array.from({ length: apis }, (_, i) => [`API ${i + 1}`, ports.api + i])] as Array<[string, number]>) {
    if (await isPortOpen('127.0.0.1', port)) throw new Error(`port ${port} (${what}) is taken: stop what runs there (\`npm start\`?) or choose other ports (docs/cluster.md)`);
  }

  const binaries = {
    temporalServer: ensureGoTool(TEMPORAL_SERVER, config.cacheDir, log),
    temporalSqlTool: ensureGoTool(TEMPORAL_SQL_TOOL, config.cacheDir, log),
    temporalUi: ensureUiServer(config.cacheDir, log),
    minio: ensureGoTool(MINIO, config.cacheDir, log),
  };
  const dir = path.join(config.dataDir, 'cluster');
  const pg = await ensurePostgres({ databaseUrl: config.databaseUrl, dbName: 'gateway_cluster', dataDir: dir, log });
  log(`[cluster] Postgres: ${redactUrl(pg.url)} (${pg.source})`);

  let cluster: GatewayCluster | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n[cluster] ${signal}: stopping ...`);
    await cluster?.stop().catch((err) => console.error(err));
    await pg.stop().catch((err) => console.error(err));
    await stopAllProcesses();
    console.log('[cluster] stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  log(`[cluster] starting Temporal, MinIO, ${workers} workers and ${apis} APIs (logs in ${path.join(dir, 'logs')}) ...`);
  cluster = await GatewayCluster.start({
    binaries, databaseUrl: pg.url, temporalDatabasePrefix: 'temporal_cluster', dir, apis, workers, ports, tls, log, secrets: keptSecrets(dir),
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
  });

  const db = createDb(pg.url, { poolMax: 2, applicationName: 'gateway-cluster' });
  try {
    const dev = await ensureDevWorkspace(db, { dataDir: dir, credits: config.devWorkspaceCredits });
    const balance = await getBalance(db, dev.workspaceId);
    const owner = await ensureDevOwner(db, { workspaceId: dev.workspaceId, baseUrl: cluster.apiUrl(0) });
    const apiUrls = Array.from({ length: apis }, (_, i) => cluster!.apiUrl(i));
    console.log([
      '',
      '  Gateway cluster is running',
      ...apiUrls.map((url, i) => `  API ${i + 1}             ${url}/v1   (web app ${url}/)`),
      `  Workers           ${workers} processes`,
      `  Temporal          ${cluster.temporal.address}${tls ? ` (${tls === 'mutual' ? 'mutual TLS' : 'TLS'}, certificates in ${path.join(dir, 'temporal', 'certs')})` : ''}, namespace ${cluster.temporal.namespace}, 16 history shards on Postgres`,
      `  Temporal Web UI   ${cluster.temporal.uiUrl ?? '(not built: use the `temporal` CLI, docs/cluster.md)'}`,
      `  Operator token    ${cluster.secrets.OPERATOR_TOKEN} (for /codec and /metrics)`,
      `  Dev workspace     ${dev.workspaceId} (${microToCredits(balance.totalMicro)} credits)`,
      `  Dev API key       ${dev.key}`,
      `  Dev owner         ${owner.email}; choose its password here (one-time link):`,
      `    ${owner.signInUrl}`,
      `  Logs              ${cluster.logDir}`,
      '',
      '  Try it (on either API):',
      ...apiUrls.map((url) => `    curl -s ${url}/v1/models -H "Authorization: Bearer ${dev.key}"`),
      '',
      '  Ctrl-C stops everything started here.',
      '',
    ].join('\n'));
  } finally {
    await db.destroy();
  }
}

/** The cluster's shared secrets, made on first start and kept (mode 600) so that its histories stay readable. */
function keptSecrets(dir: string): ClusterSecrets {
  const file = path.join(dir, 'secrets.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as ClusterSecrets;
  const secrets = newClusterSecrets();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/** The Web UI server is optional: a machine that cannot build it runs the cluster without (the `temporal` CLI reads it all). */
function ensureUiServer(cacheDir: string, log: (line: string) => void): string | null {
  try {
    return ensureGoTool(TEMPORAL_UI_SERVER, cacheDir, log);
  } catch (err) {
    log(`[cluster] the Temporal Web UI server could not be built (${err instanceof Error ? err.message : err}); running without it`);
    return null;
  }
}

main().catch(async (err) => {
  console.error(`[cluster] failed to start: ${err instanceof Error ? err.stack : err}`);
  await stopAllProcesses();
  process.exit(1);
});
