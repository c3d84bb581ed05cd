/**
 * One Bedrock call through the SDK under the gateway's rules: the attempt's deadline and the caller's
 * cancellation abort it, and whatever it fails with comes out as an UpstreamError.
 */
import type { Connection } from '../connection';
import { DEFAULT_TIMEOUT_MS } from '../http';
import type { CallContext } from '../types';
import { bedrockFailure } from './errors';

export interface CallControl {
  signal: AbortSignal;
  /** Stops the deadline (a stream's answer has begun; its silences are bounded apart). */
  endDeadline: () => void;
  /** Aborts the call as timed out (a stream gone silent). */
  timeOut: () => void;
  /** Maps a failure met during the call, or while reading its stream. */
  failure: (err: unknown) => Error;
  done: () => void;
}

export function startCall(connection: Connection, ctx: CallContext): CallControl {
  connection.assertConfigured();
  const controller = new AbortController();
  let timedOut = false;
  const timeOut = () => { timedOut = true; controller.abort(); };
  const timer = setTimeout(timeOut, connection.timeoutMs(ctx) ?? DEFAULT_TIMEOUT_MS);
  const onAbort = () => controller.abort();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal?.aborted) onAbort();
  return {
    signal: controller.signal,
    endDeadline: () => clearTimeout(timer),
    timeOut,
    failure: (err) => bedrockFailure(connection.providerId, err, timedOut, ctx.signal),
    done: () => {
      clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** Runs one request-response call. */
export async function callBedrock<T>(connection: Connection, ctx: CallContext, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const call = startCall(connection, ctx);
  try {
    return await send(call.signal);
  } catch (err) {
    throw call.failure(err);
  } finally {
    call.done();
  }
}
