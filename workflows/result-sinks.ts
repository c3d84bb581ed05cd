/**
 * Hands a synchronous request's outcome straight to the API in the same process (through a Temporal sink,
 * which runs in the worker once the workflow task's code finished), instead of the API long-polling the
 * server for the closed workflow. Money is already settled in Postgres by then; the run's completion
 * still reaches the server as usual. Sinks are not recorded in history and do not run on replay.
 */
import { isCancellation, proxySinks, type Sinks } from '@temporalio/workflow';
import { isRunStopped, toGatewayError } from '../activities/failures';
import type { SerializedGatewayError } from '../core/errors';

export interface ResultSinks extends Sinks {
  results: {
    deliver(result: unknown): void;
    fail(error: SerializedGatewayError): void;
  };
}

const { results } = proxySinks<ResultSinks>();

export async function reportingToCaller<T>(serve: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await serve();
  } catch (err) {
    // A cancelled run, or one found over (terminated, timed out), is reported by the server (as `request_stopped`), not as an error of its own.
    if (!isCancellation(err) && !isRunStopped(err)) results.fail(toGatewayError(err).toJSON());
    throw err;
  }
  results.deliver(result);
  return result;
}
