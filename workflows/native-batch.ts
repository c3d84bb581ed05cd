/**
 * A batch served on its provider's own batch API (activities/native-batches.ts), within the batch's run
 * (workflows/batch.ts), as a video job follows its provider's job:
 *
 *   hold each line's estimate -> submit the held lines (the provider's file, then its batch) ->
 *   poll with durable timers and growing intervals; a cancel, or the end of the window, is forwarded ->
 *   once it ended: each line answered is settled at the batch price with its usage record, each refused one
 *   is that line's error (its hold given back); a batch the provider failed, or that could not be made,
 *   is every line's error. Lines it never ran end with the batch (`cancelled`, `expired`), holds given back.
 */
import { condition, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import { toGatewayError } from '../activities/failures';
import type { NativeBatchState } from '../providers/types';

/** Quick database steps and one poll: retried until they succeed. */
const books = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Steps over every line (holds, results), heartbeating as they go. */
const lines = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '60 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The submission: the provider's refusal is an answer (not retried), its outages are retried a few times, and
 * a worker that died mid-way is noticed by its heartbeats stopping.
 */
const submitter = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
});

const FIRST_POLL_MS = 1_000;
const MAX_POLL_MS = 60_000;
const POLL_BACKOFF = 1.5;

export type NativeBatchEnding = 'completed' | 'cancelled' | 'expired';

/** Serves the batch on its provider's batch API; false when it is not one to serve there (its lines run on the gateway). */
export async function servedNatively(batchId: string): Promise<boolean> {
  return (await books.planNativeBatch({ batchId })).native;
}

export async function runNativeBatch(input: { batchId: string; expiresAt: number }, cancelRequested: () => boolean): Promise<NativeBatchEnding> {
  const { batchId } = input;
  await lines.holdNativeLines({ batchId });
  if (cancelRequested()) {
    // Nothing was sent: the holds go back, the lines end cancelled.
    await lines.collectNativeBatch({ batchId, ending: 'cancelled' });
    return 'cancelled';
  }
  try {
    const { submitted } = await submitter.submitNativeBatch({ batchId });
    if (!submitted) return 'completed'; // no line was held: each has its error already
  } catch (err) {
    if (isCancellation(err)) throw err;
    await lines.collectNativeBatch({ batchId, ending: 'completed', failure: toGatewayError(err).toJSON() });
    return 'completed';
  }

  let forwarded: 'cancelled' | 'expired' | null = null;
  let delay = FIRST_POLL_MS;
  let state: NativeBatchState = { status: 'running' };
  try {
    while (state.status === 'running') {
      await condition(() => forwarded === null && cancelRequested(), delay);
      if (forwarded === null && (cancelRequested() || Date.now() >= input.expiresAt)) {
        forwarded = cancelRequested() ? 'cancelled' : 'expired';
        await books.cancelNativeBatch({ batchId });
      }
      state = await books.pollNativeBatch({ batchId });
      delay = Math.min(Math.round(delay * POLL_BACKOFF), MAX_POLL_MS);
    }
    if (state.ending === 'failed') {
      await lines.collectNativeBatch({ batchId, ending: 'completed', providerFailed: { message: state.error } });
      return 'completed';
    }
    // Our cancel, or our window's end, names the ending; else the provider's own.
    const ending: NativeBatchEnding = forwarded ?? state.ending;
    await lines.collectNativeBatch({ batchId, ending });
    return ending;
  } catch (err) {
    // The provider's answer that the batch cannot be followed (outages are retried): every line not yet
    // recorded ends with it, holds given back.
    if (isCancellation(err)) throw err;
    await lines.collectNativeBatch({ batchId, ending: 'completed', failure: toGatewayError(err).toJSON() });
    return 'completed';
  }
}
