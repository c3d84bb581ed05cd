/**
 * Runs `count` calls at once; the first failure cancels the others and is what the caller sees. Families
 * that make n images with n upstream calls (BFL, Stability) run them side by side through this.
 */
export async function runAll<T>(count: number, callerSignal: AbortSignal | undefined, call: (index: number, signal: AbortSignal) => Promise<T>): Promise<T[]> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (callerSignal?.aborted) abort();
  callerSignal?.addEventListener('abort', abort, { once: true });
  try {
    return await Promise.all(Array.from({ length: count }, (_, index) => call(index, controller.signal).catch((err: unknown) => {
      abort();
      throw err;
    })));
  } finally {
    callerSignal?.removeEventListener('abort', abort);
  }
}
