/**
 * A hop's model call kept in step with its run. A run terminated by an operator or stopped by its execution
 * timeout runs no code of its own, and a local activity is not told: without a watch its call would go on
 * and settle a charge the client was told it would not pay. So while the call is in flight:
 *
 * - it heartbeats (an ordinary activity learns of a cancellation, or of its run being gone, from the answer);
 * - its cancellation (the run cancelled, the heartbeat answered that the run is gone) aborts the upstream call;
 * - from `FIRST_LOOK_MS` on it asks the server every `EVERY_MS` whether its run is still running, and aborts
 *   the call when it is not (terminated, timed out, gone);
 * - before settling, a call that ran past `FIRST_LOOK_MS` asks once more: a run that ended settles nothing.
 *   Its hold is given back by whoever saw the run end (the API answering `request_stopped`, or the hold
 *   sweeper).
 *
 * A server that cannot be asked is taken to mean the run goes on (the hop's own rules close its books).
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { log } from '../core/log';
import { RUN_STOPPED } from './failures';

const FIRST_LOOK_MS = 2_000;
const EVERY_MS = 2_000;
const HEARTBEAT_EVERY_MS = 1_000;

export class RunWatch {
  private readonly abort = new AbortController();
  private readonly startedAt = Date.now();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly client: Client | null;

  /** `heartbeat: false` for an activity that heartbeats on its own (a stream, with its progress). */
  constructor(private readonly context: Context, opts: { heartbeat?: boolean } = {}) {
    this.client = clientOf(context);
    onRunEnded(context, (why) => this.stop(why));
    if (!context.info.isLocal && opts.heartbeat !== false) {
      context.heartbeat();
      this.timers.push(setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS));
    }
    if (this.client) {
      const first = setTimeout(() => {
        void this.look();
        this.timers.push(setInterval(() => void this.look(), EVERY_MS));
      }, FIRST_LOOK_MS);
      this.timers.push(first);
    }
  }

  /** Aborted once the run is known to be over (give it to the upstream call). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Before settling: throws (non-retryable) when the run is over; a call that took a while asks the server first. */
  async ensureRunning(): Promise<void> {
    if (!this.stopped && Date.now() - this.startedAt >= FIRST_LOOK_MS) await this.look();
    if (this.stopped) throw this.failure();
  }

  /**
   * Runs the hop: a failure once the run is known to be over (the aborted call's, most often) becomes the
   * non-retryable `RunStopped`, so the hop is not tried again for a run that is over.
   */
  async guard<T>(hop: () => Promise<T>): Promise<T> {
    try {
      return await hop();
    } catch (err) {
      throw this.stopped ? this.failure() : err;
    } finally {
      this.end();
    }
  }

  private failure(): ApplicationFailure {
    return ApplicationFailure.create({ message: `the hop's run ended while it called its model (${String(this.abort.signal.reason)}); nothing is settled`, type: RUN_STOPPED, nonRetryable: true });
  }

  end(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  private stop(reason: string): void {
    if (this.stopped) return;
    log.warn({ workflowId: this.context.info.workflowExecution?.workflowId, reason }, 'a hop stops its model call: its run ended');
    this.abort.abort(reason);
    this.end();
  }

  private async look(): Promise<void> {
    const execution = this.context.info.workflowExecution;
    if (this.stopped || !this.client || !execution) return;
    try {
      const { status } = await this.client.workflow.getHandle(execution.workflowId, execution.runId).describe();
      if (status.name !== 'RUNNING') this.stop(`its run is ${status.name.toLowerCase()}`);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) this.stop('its run is gone');
    }
  }
}

/** The worker's client (absent in a mock activity environment). */
function clientOf(context: Context): Client | null {
  try {
    return context.client ?? null;
  } catch {
    return null;
  }
}

/**
 * Calls `stopped` once the activity is cancelled because its run ended or no longer wants it (cancelled,
 * terminated, timed out: the cancellation's reason says `CANCELLED`, `NOT_FOUND`, `TIMED_OUT`...), but not
 * when its own worker shuts down (that work is taken up again elsewhere).
 */
export function onRunEnded(context: Context, stopped: (why: string) => void): void {
  const cancelled = context.cancellationSignal;
  const check = () => {
    const reason = cancelled.reason instanceof Error ? cancelled.reason.message : String(cancelled.reason);
    if (!reason.includes('WORKER_SHUTDOWN')) stopped(`its activity was cancelled (${reason})`);
  };
  if (cancelled.aborted) check();
  else cancelled.addEventListener('abort', check, { once: true });
}
