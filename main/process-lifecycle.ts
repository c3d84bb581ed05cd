/**
 * Runs a long-lived process part and stops it gracefully on SIGTERM or SIGINT (main/runtime.ts `shutdown`):
 * not ready at once, in-flight work given GATEWAY_SHUTDOWN_GRACE_SECONDS, then exit 0. Further signals while
 * it stops change nothing (Ctrl-C reaches both this process and scripts/bootstrap.js, which passes it on).
 */
export function runUntilSignal(name: string, start: () => Promise<{ shutdown(): Promise<void> }>): void {
  let running: { shutdown(): Promise<void> } | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[${name}] ${signal}: stopping (in-flight work may finish) ...`);
    try {
      await running?.shutdown();
    } catch (err) {
      console.error(err);
      process.exit(1);
    }
    console.log(`[${name}] stopped`);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  start().then((r) => { running = r; }).catch((err) => {
    console.error(`[${name}] failed to start: ${err instanceof Error ? err.stack : err}`);
    process.exit(1);
  });
}
