/**
 * Gateway errors crossing the Temporal boundary, one policy for every activity. An activity's error leaves
 * as an ApplicationFailure whose type is the error class name and whose first detail is its JSON (with the
 * error's own `retryable` and `fallsBack` decisions); the workflow and the API read those back instead of
 * keeping lists of their own. Pure (no activity context), so workflow code may import it.
 */
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import {
  GATEWAY_ERROR_NAMES, GatewayError, gatewayErrorFromJSON, InternalError, UpstreamError, type SerializedGatewayError,
} from '../core/errors';
import { outageError } from '../core/outages';

/** Retry delays for one step: exponential with jitter; a Retry-After longer than this means "fall back now". */
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 4_000;
export const MAX_RETRY_AFTER_MS = 10_000;

export function retryDelayMs(attempt: number, retryAfterMs: number | null, random = Math.random): number | null {
  if (retryAfterMs !== null && retryAfterMs > MAX_RETRY_AFTER_MS) return null;
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  const jittered = Math.round(exponential * (0.5 + random() * 0.5));
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * The failure an activity throws for `err` on its `attempt`-th try: typed errors decide whether a retry may
 * help (a transient upstream failure waits with backoff or its Retry-After; one too long to wait for is
 * final so the chain falls back now; caller errors never retry); anything untyped is a hiccup of our own
 * (storage, database: a 503 when it is a store's outage) and is retried under the activity's policy. Temporal's own failures pass through.
 */
export function toActivityFailure(err: unknown, attempt: number): TemporalFailure {
  if (err instanceof TemporalFailure) return err;
  // An outage of our own stores is told apart so that, should it outlast the retries, the client gets a 503.
  const error = err instanceof GatewayError ? err : outageError(err) ?? new InternalError(err instanceof Error ? err.message : String(err), { transient: true });
  const delay = error.retryable ? retryDelayMs(attempt, error instanceof UpstreamError ? error.retryAfterMs : null) : null;
  return ApplicationFailure.create({
    message: error.message,
    type: error.name,
    details: [error.toJSON()],
    nonRetryable: delay === null,
    nextRetryDelay: delay ?? undefined,
  });
}

/** Finds the gateway error inside any error or Temporal failure chain. */
export function toGatewayError(err: unknown): GatewayError {
  return findGatewayError(err) ?? new InternalError(err instanceof Error ? err.message : String(err));
}

/** The gateway error a failure chain carries, or null when it carries none (e.g. a timeout of Temporal's own). */
export function findGatewayError(err: unknown): GatewayError | null {
  if (err instanceof GatewayError) return err;
  let current: unknown = err;
  for (let depth = 0; current && depth < 10; depth++) {
    if (current instanceof ApplicationFailure && current.type && (GATEWAY_ERROR_NAMES as readonly string[]).includes(current.type)) {
      const detail = current.details?.[0] as SerializedGatewayError | undefined;
      if (detail && typeof detail === 'object') return gatewayErrorFromJSON(detail);
    }
    if (current instanceof TemporalFailure || current instanceof Error) {
      current = (current as { cause?: unknown }).cause;
    } else {
      break;
    }
  }
  return null;
}

/** Whether the next model of a chain may take over after this failure (the error's own decision). */
export function mayFallBack(err: unknown): boolean {
  return findGatewayError(err)?.fallsBack ?? false;
}

/** The failure type of a hop whose run ended (terminated, timed out, gone) while it called its model (activities/run-watch.ts). */
export const RUN_STOPPED = 'RunStopped';

/**
 * Whether `err` (as the workflow sees it) says the hop's run had already ended: the worker still running that
 * run's code (it has not heard yet) must not close books or tell a caller anything; the run is over.
 */
export function isRunStopped(err: unknown): boolean {
  for (let cause = err as { cause?: unknown; type?: string } | undefined; cause; cause = cause.cause as typeof cause) {
    if (cause instanceof ApplicationFailure && cause.type === RUN_STOPPED) return true;
  }
  return false;
}
