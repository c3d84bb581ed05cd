/**
 * Runs a long-lived process part and stops it gracefully on SIGTERM or SIGINT (main/runtime.ts `shutdown`):
 * not ready at once, in-flight work given GATEWAY_SHUTDOWN_GRACE_SECONDS, then exit 0. A second signal
 * while stopping exits at once (1).
 */
export function runUntilSignal(name: string, start: () => Promise<{ shutdown(): Promise<void> }>): void {
  let running: { shutdown(): Promise<void> } | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      console.log(`[${name}] ${signal} again: exiting now`);
      process.exit(1);
    }
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
