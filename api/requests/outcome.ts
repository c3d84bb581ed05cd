/**
 * Waiting for a request workflow's outcome. When the run was started eagerly on this process's own worker,
 * the outcome is handed over in-process (activities/result-broker.ts: by the hop that settled it, or by the
 * run's result sink); otherwise, or if the run moved to another worker, the server is asked the ordinary way.
 *
 * Losing sight of a run is not its failure: while the server cannot be asked (restarting, unreachable) the
 * API keeps asking for a while, then answers 504 `outcome_unknown`, pointing at the run's outcome (GET
 * /v1/requests/{id}, or the same Idempotency-Key again), never a 500 that invites a paid second try.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure, TerminatedFailure, TimeoutFailure, type Workflow, type WorkflowResultType } from '@temporalio/common';
import type { Knex } from 'knex';
import { GatewayError, ServiceUnavailableError } from '../../core/errors';
import { microToCredits } from '../../core/money';
import { releaseHoldsOfRun } from '../../domain/abandoned-holds';
import { toGatewayError } from '../../activities/failures';
import type { ResultBroker } from '../../activities/result-broker';

/** How long an eagerly started run may take before the server is asked as well. */
const IN_PROCESS_GRACE_MS = 5_000;

/** Which run the client asked for, to tell it how to find the outcome when we cannot. */
export interface RunRef {
  /** This HTTP request's id (the run's own when it started the run). */
  requestId: string;
  /** The request joined a run started earlier with the same Idempotency-Key. */
  joined: boolean;
  /** How long to keep asking a server that does not answer before giving up (ms). */
  patienceMs: number;
}

/** An outcome handed over in this process (by the run's worker here, or by a first hop). */
export interface InProcessOutcome<T> {
  promise: Promise<T>;
  cancel(): void;
}

export function expectOutcome(results: ResultBroker | null, workflowId: string): InProcessOutcome<unknown> | null {
  return results?.expect<unknown>(workflowId) ?? null;
}

export async function awaitOutcome<W extends Workflow, T = WorkflowResultType<W>>(handle: WorkflowHandle<W> & { eagerlyStarted?: boolean }, expectation: InProcessOutcome<unknown> | null, run: RunRef): Promise<T> {
  if (!expectation || !handle.eagerlyStarted) {
    expectation?.cancel();
    return runResult<T>(handle, run);
  }
  let timer: NodeJS.Timeout | undefined;
  const fromServer = new Promise<void>((resolve) => { timer = setTimeout(resolve, IN_PROCESS_GRACE_MS); }).then(() => runResult<T>(handle, run));
  fromServer.catch(() => undefined); // when the in-process outcome wins, this one is not awaited
  try {
    return await Promise.race([expectation.promise as Promise<T>, fromServer]);
  } finally {
    clearTimeout(timer);
    expectation.cancel();
  }
}

/**
 * The run's result from the server. A run that failed throws its failure (a run stopped by an operator, its
 * timeout or a cancellation says so); a server that does not answer is asked again until `patienceMs`
 * passed, then the outcome is unknown.
 */
export async function runResult<T>(handle: WorkflowHandle, run: RunRef): Promise<T> {
  const giveUpAt = Date.now() + run.patienceMs;
  let delay = 250;
  for (;;) {
    try {
      return (await handle.result()) as T;
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw stopped(err, whereToLook(run)) ?? err;
      if (Date.now() >= giveUpAt) throw outcomeUnknown(run);
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, giveUpAt - Date.now()))));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

function whereToLook(run: Pick<RunRef, 'requestId' | 'joined'>): string {
  return run.joined
    ? 'Send it again with the same Idempotency-Key to receive its result.'
    : `GET /v1/requests/${run.requestId} shows its outcome and charge; or send it with an Idempotency-Key to make retries safe.`;
}

/** 504: the request may have started (and may finish, charged at most once), but the gateway cannot tell now. */
export function outcomeUnknown(run: Pick<RunRef, 'requestId' | 'joined'>): ServiceUnavailableError {
  return new ServiceUnavailableError(
    `The gateway lost sight of this request (its workflow service did not answer in time). It may still run and finish, and is charged at most once; do not send it again as a new request. ${whereToLook(run)}`,
    { code: 'outcome_unknown', status: 504, retryAfterSeconds: 5 },
  );
}

/** A run ended without an answer of its own: terminated, timed out or cancelled. */
function stopped(err: WorkflowFailedError, hint?: string): ServiceUnavailableError | null {
  const how = err.cause instanceof TerminatedFailure ? 'was stopped by an operator'
    : err.cause instanceof TimeoutFailure ? 'ran out of time'
      : err.cause instanceof CancelledFailure ? 'was cancelled' : null;
  if (!how) return null;
  return new ServiceUnavailableError(`The request ${how} before it finished; any credits held for it are given back.${hint ? ` ${hint}` : ''}`, {
    code: 'request_stopped', status: err.cause instanceof TimeoutFailure ? 504 : 503, retryAfterSeconds: 1,
  });
}

/** Who gives back the holds of a run the API saw stopped (in the audit log). */
export const REQUEST_STOPPED_ACTOR = 'system:request-stopped';

/**
 * A run stopped (terminated, timed out, cancelled) before it answered: before the client is told so, its
 * holds still open are given back, so a hop still calling its model upstream can charge nothing afterwards
 * (activities/run-watch.ts stops that call). A hop that had already settled is said, with its charge. Any
 * other failure passes through unchanged.
 */
export async function closeStoppedRun(db: Knex, workflowId: string, err: unknown): Promise<unknown> {
  if (!(err instanceof GatewayError && err.code === 'request_stopped')) return err;
  const holds = await releaseHoldsOfRun(db, workflowId, { actor: REQUEST_STOPPED_ACTOR, reason: 'its run was stopped before it answered', data: { answer: 'request_stopped', status: err.status } });
  return stoppedWithCharge(err, holds.chargedMicro);
}

/** A `request_stopped` error saying what was charged before the stop (unchanged when nothing was). */
export function stoppedWithCharge<E extends GatewayError>(err: E, chargedMicro: number): E | ServiceUnavailableError {
  if (chargedMicro === 0 || err.code !== 'request_stopped') return err;
  const message = err.message.replace('any credits held for it are given back', `it was charged ${microToCredits(chargedMicro)} credits for what it had produced by then, which stand`);
  return new ServiceUnavailableError(message, { code: 'request_stopped', status: err.status === 504 ? 504 : 503, retryAfterSeconds: 1 });
}

/** What a failed run reports: how it was stopped, or the gateway error it failed with. */
export function failureOfRun(err: WorkflowFailedError): GatewayError {
  return stopped(err) ?? toGatewayError(err);
}
