/**
 * A batch, durable end to end: one run per batch (`batch-<id>`), continuing as new every `linesPerRun`
 * lines so its history stays bounded; each line one child run (`batch-<id>-line-<n>`) that walks the line
 * along the workspace's fallback chain exactly as a synchronous request does (serveAlongChain: hold, call
 * with retries, settle with the usage record), under a request id and holds derived from the batch and the
 * line. A line's run id is unique for good: a run replayed after a crash, or a line started twice, never
 * serves (or charges) a line twice.
 *
 *   validate the input file (OpenAI's batches; Anthropic's are checked when made) ->
 *   a batch its model's provider serves in batches of its own goes there (workflows/native-batch.ts); else
 *   while lines are left: claim as many as the batch's and the workspace's concurrency and the key's rpm
 *   allow (waiting when none may start: never failing) and start them ->
 *   cancelled (signal) or past the window: start no more; lines in flight finish ->
 *   write the output and error files, end completed / cancelled / expired.
 *
 * Bodies and answers stay out of this history (activities/batches.ts): it holds line numbers only.
 */
import {
  condition, continueAsNew, defineSignal, isCancellation, ParentClosePolicy, patched, proxyActivities, setHandler, startChild, WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { GatewayActivities } from '../activities';
import { isRunStopped, toGatewayError } from '../activities/failures';
import { BATCH_CANCEL_SIGNAL, batchLineWorkflowId } from './contracts';
import { activitiesFor, serveAlongChain, servedHop, type ActivityMode } from './request-steps';
import { plainHopInput } from './hop-inputs';
import { runNativeBatch, servedNatively } from './native-batch';

/** Batches served on their provider's own batch API (runs begun before it serve every line themselves). */
const NATIVE_BATCHES_PATCH = 'batch-provider-native';

/** Database steps: quick and idempotent, retried until they succeed (a batch's books must close). */
const books = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** Validation reads the whole input file (up to 200 MB), heartbeating as it goes. */
const validation = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Writing the output and error files (one pass over the lines each). */
const finishing = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export const batchCancelSignal = defineSignal(BATCH_CANCEL_SIGNAL);

export interface BatchWorkflowInput {
  batchId: string;
  /** When the completion window ends (ms since the epoch). */
  expiresAt: number;
  /** Lines of this batch in flight at once. */
  concurrency: number;
  /** Lines of the workspace's batches in flight at once (counted across its batches). */
  workspaceConcurrency: number;
  /** Lines started per run before it continues as new. */
  linesPerRun: number;
  activityMode?: ActivityMode;
  /** Set by continue-as-new: the input is valid and holds `total` lines, `next` is the first not started. */
  progress?: { total: number; next: number };
}

export type BatchEnding = 'completed' | 'cancelled' | 'expired' | 'failed';

export async function batchWorkflow(input: BatchWorkflowInput): Promise<BatchEnding> {
  let cancelRequested = false;
  setHandler(batchCancelSignal, () => { cancelRequested = true; });

  let total: number;
  let next: number;
  if (input.progress) {
    ({ total, next } = input.progress);
  } else {
    const validated = await validation.validateBatch({ batchId: input.batchId });
    if (!validated.ok) return 'failed';
    if (validated.status === 'cancelling') cancelRequested = true;
    total = validated.total;
    next = 0;
    // Lines of one model that its provider serves in batches of its own go there instead (workflows/native-batch.ts).
    if (patched(NATIVE_BATCHES_PATCH) && (await servedNatively(input.batchId))) {
      const ending = await runNativeBatch(input, () => cancelRequested);
      await finishing.finishBatch({ batchId: input.batchId, ending });
      return ending;
    }
  }

  const inFlight = new Set<Promise<void>>();
  let startedThisRun = 0;
  let expired = false;
  const untilExpiry = () => Math.max(0, input.expiresAt - Date.now());
  // A wait's ceiling: never 0 (no timeout at all), never past the window.
  const waitAtMost = (ms: number) => Math.max(1, Math.min(ms, untilExpiry()));

  while (next < total && !cancelRequested) {
    if (untilExpiry() === 0) {
      expired = true;
      break;
    }
    if (startedThisRun >= input.linesPerRun) {
      // Lines in flight are children of this run: they finish before it continues as new.
      await Promise.all(inFlight);
      return continueAsNew<typeof batchWorkflow>({ ...input, progress: { total, next } });
    }
    const free = Math.min(input.concurrency - inFlight.size, input.linesPerRun - startedThisRun);
    if (free <= 0) {
      // The batch's own concurrency is full: a line finishing makes room.
      const size = inFlight.size;
      await condition(() => inFlight.size < size || cancelRequested, waitAtMost(untilExpiry()));
      continue;
    }
    const claim = await books.claimBatchLines({ batchId: input.batchId, from: next, want: free, workspaceConcurrency: input.workspaceConcurrency });
    // `cancelling` (or any status but in_progress: the batch was stopped from outside): start no more.
    if (claim.status !== 'in_progress') cancelRequested = true;
    if (claim.claimed === 0) {
      // Over a limit (the workspace's lines, the key's rpm): wait, then ask again; a line finishing may free room sooner.
      const size = inFlight.size;
      if (claim.waitMs > 0) await condition(() => cancelRequested || inFlight.size < size, waitAtMost(claim.waitMs));
      continue;
    }
    for (let i = 0; i < claim.claimed; i++) {
      const line = runLine(input, next + i).finally(() => inFlight.delete(line));
      inFlight.add(line);
    }
    next += claim.claimed;
    startedThisRun += claim.claimed;
  }

  // Cancelled or expired: no more lines start; those in flight finish, and are in the output.
  await Promise.all(inFlight);
  const ending = cancelRequested ? 'cancelled' : expired ? 'expired' : 'completed';
  await finishing.finishBatch({ batchId: input.batchId, ending });
  return ending;
}

/** Runs one line as its own child run; a line's failure is that line's (recorded as its error), never the batch's. */
async function runLine(input: BatchWorkflowInput, index: number): Promise<void> {
  try {
    const child = await startChild(batchLineWorkflow, {
      workflowId: batchLineWorkflowId(input.batchId, index),
      args: [{ batchId: input.batchId, index, activityMode: input.activityMode }],
      // A line runs once, ever: a second start of the same line is refused (its first run's outcome stands).
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowExecutionTimeout: '30 minutes',
    });
    await child.result();
  } catch (err) {
    if (isCancellation(err)) throw err;
    if (isAlreadyStarted(err)) return;
    // The line's run failed or timed out without recording an outcome: the line ends with that error.
    await books.recordBatchLine({ batchId: input.batchId, index, requestId: null, error: toGatewayError(err).toJSON() });
  }
}

function isAlreadyStarted(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError;
}

export interface BatchLineInput {
  batchId: string;
  index: number;
  activityMode?: ActivityMode;
}

/**
 * One line of a batch, served as a synchronous request is (workflows/request-steps.ts): its outcome, an
 * answer or that line's own error, is written to its row; nothing large passes through here but refs.
 */
export async function batchLineWorkflow(input: BatchLineInput): Promise<void> {
  const request = await books.prepareBatchLine({ batchId: input.batchId, index: input.index, activityMode: input.activityMode });
  if (!request) return; // the line already has its outcome
  const { models } = activitiesFor(request);
  try {
    const result = await serveAlongChain(request, {
      call: async (_model, depth, ticket) => servedHop(await models.serveHop(plainHopInput(request, depth, ticket))),
    });
    await books.recordBatchLine({ batchId: input.batchId, index: input.index, requestId: request.requestId, served: { response: result.detail, creditsUsedMicro: result.creditsUsedMicro } });
  } catch (err) {
    if (isCancellation(err) || isRunStopped(err)) throw err;
    await books.recordBatchLine({ batchId: input.batchId, index: input.index, requestId: request.requestId, error: toGatewayError(err).toJSON() });
  }
}

