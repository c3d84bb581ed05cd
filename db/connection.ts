import knexFactory, { type Knex } from 'knex';
import path from 'node:path';
import pg from 'pg';

// bigint columns (credits in micro-credits, byte counts) come back as JS numbers: every value we store
// stays far below 2^53, and exact integer arithmetic is what the ledger needs.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`bigint ${value} exceeds the safe integer range`);
  return n;
});

export type Db = Knex;

/** `settings`: server settings of this pool's sessions (e.g. `{ synchronous_commit: 'off' }`). */
export function createDb(databaseUrl: string, opts: { poolMax?: number; applicationName?: string; settings?: Record<string, string> } = {}): Db {
  const options = Object.entries(opts.settings ?? {}).map(([name, value]) => `-c ${name}=${value}`).join(' ');
  return knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: opts.applicationName ?? 'gateway', ...(options ? { options } : {}) },
    pool: { min: 0, max: opts.poolMax ?? 10 },
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.js'], tableName: 'knex_migrations' },
  });
}

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** Applies every pending migration; safe to run from several processes at once (knex takes a lock). Returns the names it applied. */
export async function migrate(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ directory: MIGRATIONS_DIR, loadExtensions: ['.js'] })) as [number, string[]];
  return applied;
}
