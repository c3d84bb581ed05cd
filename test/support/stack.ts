/**
 * The real stack for tests, started once per test run on first use: a Temporal dev server (in memory),
 * MinIO (temp dir) and a fresh Postgres database, all on 127.0.0.1 and free ports. Root hooks stop it.
 */
import { loadConfig } from '../../config/env';
import { resolveStack, type ResolvedStack } from '../../stack';
import { dropDatabase } from '../../stack/postgres';
import { stopAllProcesses } from '../../stack/processes';

let shared: Promise<ResolvedStack> | null = null;
let dbName: string | null = null;

export function testDatabaseName(): string {
  dbName ??= `gateway_test_${process.pid}_${Date.now().toString(36)}`;
  return dbName;
}

export function getSharedStack(): Promise<ResolvedStack> {
  shared ??= (async () => {
    const config = loadConfig({ ...process.env, DATABASE_URL: undefined, TEMPORAL_ADDRESS: undefined, S3_ENDPOINT: undefined });
    const started = Date.now();
    const stack = await resolveStack(config, { mode: 'test', dbName: testDatabaseName(), log: (line) => process.env.TEST_VERBOSE && console.log(line) });
    if (process.env.TEST_VERBOSE) console.log(`[test] stack ready in ${Date.now() - started} ms`);
    return stack;
  })();
  return shared;
}

export async function stopSharedStack(): Promise<void> {
  if (!shared) return;
  const stack = await shared.catch(() => null);
  shared = null;
  if (stack) {
    await stack.stop();
    if (stack.databaseUrl.includes('127.0.0.1:5432')) {
      await dropDatabase('postgres://postgres@127.0.0.1:5432/postgres', testDatabaseName()).catch(() => undefined);
    }
  }
  await stopAllProcesses();
}
