/**
 * `npm start`: the whole gateway on this machine. Starts (or reuses) Postgres, Temporal and S3, runs the
 * API and a worker in this process, prints where everything is, and stops what it started on Ctrl-C.
 */
import { loadConfig } from '../config/env';
import { ensureDevOwner, ensureDevWorkspace } from '../domain/dev-workspace';
import { microToCredits } from '../core/money';
import { getBalance } from '../domain/ledger';
import { startRuntime, type Runtime } from './runtime';
import { resolveStack, type ResolvedStack } from '../stack';
import { stopAllProcesses } from '../stack/processes';

async function main(): Promise<void> {
  const config = loadConfig();
  let stack: ResolvedStack | null = null;
  let runtime: Runtime | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n[gateway] ${signal}: stopping ...`);
    await runtime?.shutdown().catch((err) => console.error(err));
    await stack?.stop().catch((err) => console.error(err));
    await stopAllProcesses();
    console.log('[gateway] stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  stack = await resolveStack(config, { mode: 'dev', dbName: 'gateway' });
  runtime = await startRuntime({ config, databaseUrl: stack.databaseUrl, temporalAddress: stack.temporalAddress, s3: stack.s3, api: true, worker: true });
  const dev = await ensureDevWorkspace(runtime.db, { dataDir: config.dataDir, credits: config.devWorkspaceCredits });
  const balance = await getBalance(runtime.db, dev.workspaceId);
  const app = runtime.publicUrl!;
  const owner = await ensureDevOwner(runtime.db, { workspaceId: dev.workspaceId, baseUrl: app });
  const base = `${runtime.http!.url}/v1`;
  const lines = [
    '',
    '  Gateway is running',
    `  API base URL      ${base}`,
    `  Temporal Web UI   ${stack.temporalUiUrl ?? '(your Temporal cluster\'s UI)'}`,
    `  Codec endpoint    ${runtime.http!.url}/codec (histories are encrypted; sign in at ${runtime.http!.url}/codec/session)`,
    `  Operator token    ${config.operatorToken ? '(the one in OPERATOR_TOKEN)' : runtime.operatorToken} (for /codec and /metrics)`,
    `  Dev workspace     ${dev.workspaceId} (${microToCredits(balance.totalMicro)} credits)`,
    `  Dev API key       ${dev.key}`,
    `  Web app           ${app}/ (sign up, or sign in as the dev owner:)`,
    `  Dev owner         ${owner.email}; choose its password here (one-time link):`,
    `    ${owner.signInUrl}`,
    `  E-mails           ${config.smtpUrl ? `sent through ${config.smtpUrl}` : 'no SMTP_URL: verification and invitation links are written to this log'}`,
    '',
    '  Try it:',
    `    curl -s ${base}/models -H "Authorization: Bearer ${dev.key}"`,
    `    curl -s ${base}/chat/completions -H "Authorization: Bearer ${dev.key}" -H "Content-Type: application/json" \\`,
    `      -d '{"model":"sim-chat","messages":[{"role":"user","content":"Hello!"}]}'`,
    '',
    '  Ctrl-C stops everything started here.',
    '',
  ];
  console.log(lines.join('\n'));
}

main().catch(async (err) => {
  console.error(`[gateway] failed to start: ${err instanceof Error ? err.stack : err}`);
  await stopAllProcesses();
  process.exit(1);
});
