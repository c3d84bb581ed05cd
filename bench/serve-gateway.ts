/**
 * The gateway under benchmark: API and worker in one process (as `npm start` runs them), on the stores
 * given in the environment, with a funded workspace and key. Prints `{url, key}` once ready.
 */
import { loadConfig } from '../config/env';
import { createApiKey, createWorkspace, KEY_QUOTA_LIMITS } from '../domain/workspaces';
import { startRuntime } from '../main/runtime';
import { runUntilSignal } from '../main/process-lifecycle';

runUntilSignal('bench-gateway', async () => {
  const config = loadConfig();
  const runtime = await startRuntime({
    config, databaseUrl: config.databaseUrl!, temporalAddress: config.temporalAddress!, s3: config.s3!, api: true, worker: true,
  });
  const workspace = await createWorkspace(runtime.db, { name: 'bench', credits: 10_000_000, actor: 'bench' });
  // A key as on a plan, with a requests-per-minute window and a daily token cap (the highest a key may have, far above the run), so
  // every request takes the whole admission path.
  const key = await createApiKey(runtime.db, { workspaceId: workspace.id, name: 'bench', role: 'owner', quotas: { rpm: KEY_QUOTA_LIMITS.rpm, dailyTokens: KEY_QUOTA_LIMITS.dailyTokens }, actor: 'bench' });
  process.stdout.write(`${JSON.stringify({ url: runtime.http!.url, key: key.key })}\n`);
  return runtime;
});
