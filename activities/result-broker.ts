/**
 * Where an API process waits for the outcome of a request that its own worker runs (eager start). The
 * outcome is handed over in-process, saving the long poll for the closed run: by the hop's activity as soon
 * as it has settled what it served (activities/requests.ts), or by the workflow's result sink when the run
 * ends otherwise (worker/result-sinks.ts). The first hand-over wins; later ones find no waiter. A request
 * whose run went elsewhere is awaited the ordinary way (api/requests/outcome.ts falls back to the handle).
 */
interface Waiter {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export class ResultBroker {
  private readonly waiters = new Map<string, Waiter>();

  /** Registers interest before the workflow starts (its first task may finish before start() returns). */
  expect<T>(workflowId: string): { promise: Promise<T>; cancel(): void } {
    let waiter!: Waiter;
    const promise = new Promise<T>((resolve, reject) => { waiter = { resolve: resolve as (v: unknown) => void, reject }; });
    this.waiters.set(workflowId, waiter);
    return { promise, cancel: () => { this.waiters.delete(workflowId); } };
  }

  deliver(workflowId: string, result: unknown): void {
    this.settle(workflowId, (w) => w.resolve(result));
  }

  fail(workflowId: string, err: unknown): void {
    this.settle(workflowId, (w) => w.reject(err));
  }

  private settle(workflowId: string, act: (waiter: Waiter) => void): void {
    const waiter = this.waiters.get(workflowId);
    if (!waiter) return;
    this.waiters.delete(workflowId);
    act(waiter);
  }
}
