/**
 * A batch, durable end to end: one run per batch (`batch-<id>`), continuing as new every `linesPerRun`
 * lines so its history stays bounded. Each line is served inside that run, as a synchronous request is
 * served inside its own: prepare (the line's body to storage, its chain), walk the workspace's fallback
 * chain (serveAlongChain: hold, call with retries, settle with the usage record), record the outcome, each a
 * local activity. A line thus costs its run a marker per step in history (3.3 events a line with its share
 * of the claims, measured on 10,000 lines: bench/README.md), and no run, task queue round trip or workflow
 * task of its own: less Temporal work than a synchronous request's. `linesPerRun` (1,000 by default) keeps a
 * run near 3,300 events, well under Temporal's limits.
 *
 * Exactly once: a line's request id and holds are derived from the batch and the line (`batch-<id>-line-<n>:
 * <depth>`, as when each line was its own run), so a line re-run after a crash or a replay takes the hold
 * it took before (and calls only on a hold still held, or settled by this same request); a line that
 * already has its outcome is skipped, and its outcome is recorded once.
 *
 *   validate the input file (OpenAI's batches; Anthropic's are checked when made) ->
 *   a batch its model's provider serves in batches of its own goes there (workflows/native-batch.ts); else
 *   while lines are left: claim as many as the batch's and the workspace's concurrency and the key's rpm
 *   allow (waiting when none may start: never failing) and start them ->
 *   cancelled (signal) or past the window: start no more; lines in flight finish ->
 *   write the output and error files, end completed / cancelled / expired.
 *
 * Runs begun before lines were served inline (no `batch-lines-inline` marker) start each line as a child
 * run, `batchLineWorkflow`, which stays registered for them. Bodies and answers stay out of this history
 * (activities/batches.ts): it holds line numbers and refs only.
 */
import {
  condition, continueAsNew, defineSignal, isCancellation, ParentClosePolicy, patched, proxyActivities, proxyLocalActivities, setHandler, startChild,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { GatewayActivities } from '../activities';
import { isRunStopped, toGatewayError } from '../activities/failures';
import { BATCH_CANCEL_SIGNAL, batchLineWorkflowId } from './contracts';
import type { BatchLineRequest } from '../activities/batches';
import { activitiesFor, serveAlongChain, servedHop, type ActivityMode } from './request-steps';
import { plainHopInput } from './hop-inputs';
import { runNativeBatch, servedNatively } from './native-batch';

/** Batches served on their provider's own batch API (runs begun before it serve every line themselves). */
const NATIVE_BATCHES_PATCH = 'batch-provider-native';

const BOOKS_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
} as const;

/** Database steps: quick and idempotent, retried until they succeed (a batch's books must close). */
const books = proxyActivities<GatewayActivities>(BOOKS_OPTIONS);
/** The same steps in the worker's own process, for lines served inside the batch's run. */
const localBooks = proxyLocalActivities<GatewayActivities>(BOOKS_OPTIONS);

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
  // Lines served inside this run (not each its own child run): runs begun before run their lines as children.
  const inline = patched('batch-lines-inline');
  const claims = inline ? localBooks : books;
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
      // Lines in flight belong to this run: they finish before it continues as new.
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
    const claim = await claims.claimBatchLines({ batchId: input.batchId, from: next, want: free, workspaceConcurrency: input.workspaceConcurrency });
    // `cancelling` (or any status but in_progress: the batch was stopped from outside): start no more.
    if (claim.status !== 'in_progress') cancelRequested = true;
    if (claim.claimed === 0) {
      // Over a limit (the workspace's lines, the key's rpm): wait, then ask again; a line finishing may free room sooner.
      const size = inFlight.size;
      if (claim.waitMs > 0) await condition(() => cancelRequested || inFlight.size < size, waitAtMost(claim.waitMs));
      continue;
    }
    for (let i = 0; i < claim.claimed; i++) {
      const line = (inline ? serveLine(input, next + i) : runLine(input, next + i)).finally(() => inFlight.delete(line));
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

/**
 * Serves one line inside the batch's run; a line's failure is that line's (recorded as its error), never the
 * batch's. A line that already has its outcome (served before a crash, or by an earlier run) is skipped.
 */
async function serveLine(input: BatchWorkflowInput, index: number): Promise<void> {
  let request: BatchLineRequest | null;
  try {
    request = await localBooks.prepareBatchLine({ batchId: input.batchId, index, activityMode: input.activityMode });
  } catch (err) {
    if (isCancellation(err) || isRunStopped(err)) throw err;
    await localBooks.recordBatchLine({ batchId: input.batchId, index, requestId: null, error: toGatewayError(err).toJSON() });
    return;
  }
  if (request) await walkLine(request, index, localBooks);
}

/**
 * Runs one line as its own child run (runs begun before lines were served inline); a line's failure is that
 * line's (recorded as its error), never the batch's.
 */
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
  await walkLine(request, input.index, books);
}

/**
 * Walks a prepared line along its chain, as a synchronous request is walked (the same hops), with its holds
 * named after the line (`batch-<id>-line-<n>:<depth>`) wherever it runs, and records its outcome.
 */
async function walkLine(request: BatchLineRequest, index: number, steps: Pick<typeof books, 'recordBatchLine'>): Promise<void> {
  const { batchId } = request.batch;
  const { models } = activitiesFor(request);
  try {
    const result = await serveAlongChain(request, {
      holdsOf: batchLineWorkflowId(batchId, index),
      call: async (_model, depth, ticket) => servedHop(await models.serveHop(plainHopInput(request, depth, ticket))),
    });
    await steps.recordBatchLine({ batchId, index, requestId: request.requestId, served: { response: result.detail, creditsUsedMicro: result.creditsUsedMicro } });
  } catch (err) {
    if (isCancellation(err) || isRunStopped(err)) throw err;
    await steps.recordBatchLine({ batchId, index, requestId: request.requestId, error: toGatewayError(err).toJSON() });
  }
}

