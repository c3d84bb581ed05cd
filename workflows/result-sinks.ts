/**
 * Hands a synchronous request's outcome straight to the API in the same process (through a Temporal sink,
 * which runs in the worker once the workflow task's code finished), instead of the API long-polling the
 * server for the closed workflow. Money is already settled in Postgres by then; the run's completion
 * still reaches the server as usual. Sinks are not recorded in history and do not run on replay.
 */
import { proxySinks, type Sinks } from '@temporalio/workflow';
import { gatewayErrorOf } from './request-steps';

export interface ResultSinks extends Sinks {
  results: {
    deliver(result: unknown): void;
    fail(error: { name: string; message: string } & Record<string, unknown>): void;
  };
}

const { results } = proxySinks<ResultSinks>();

export async function reportingToCaller<T>(serve: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await serve();
  } catch (err) {
    const error = gatewayErrorOf(err) ?? { name: 'InternalError', message: err instanceof Error ? err.message : String(err), status: 500, type: 'server_error', code: null, param: null, headers: {} };
    results.fail(error as never);
    throw err;
  }
  results.deliver(result);
  return result;
}
