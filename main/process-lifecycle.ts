/** Runs a long-lived process part and stops it gracefully on SIGINT/SIGTERM. */
export function runUntilSignal(name: string, start: () => Promise<{ stop(): Promise<void> }>): void {
  let running: { stop(): Promise<void> } | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[${name}] ${signal}: stopping ...`);
    await running?.stop().catch((err) => console.error(err));
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  start().then((r) => { running = r; }).catch((err) => {
    console.error(`[${name}] failed to start: ${err instanceof Error ? err.stack : err}`);
    process.exit(1);
  });
}
