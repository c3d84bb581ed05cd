/**
 * Where an API process waits for the outcome of a request workflow that its own worker runs (eager start):
 * the workflow's result sink resolves the waiter in-process, saving the long poll for the closed run.
 * A workflow that ran elsewhere is awaited the ordinary way (the caller falls back to the handle).
 */
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { gatewayErrorFromJSON, type SerializedGatewayError } from '../core/errors';
import type { ResultSinks } from '../workflows/result-sinks';

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

  sinks(): InjectedSinks<ResultSinks> {
    return {
      results: {
        deliver: {
          fn: (info: WorkflowInfo, result: unknown) => this.settle(info.workflowId, (w) => w.resolve(result)),
          callDuringReplay: false,
        },
        fail: {
          fn: (info: WorkflowInfo, error) => this.settle(info.workflowId, (w) => w.reject(gatewayErrorFromJSON(error as unknown as SerializedGatewayError))),
          callDuringReplay: false,
        },
      },
    };
  }

  private settle(workflowId: string, act: (waiter: Waiter) => void): void {
    const waiter = this.waiters.get(workflowId);
    if (!waiter) return;
    this.waiters.delete(workflowId);
    act(waiter);
  }
}
