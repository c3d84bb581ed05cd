/**
 * One video generation job, durable end to end; the workflow id is the job id (`vgen_...`).
 *
 *   for model in [requested, ...fallback chain]:
 *     price it for the job -> hold credits -> submit upstream (retries with backoff; throttling, 5xx and
 *     timeouts that outlast them fall back to the next model, caller errors end the job)
 *   then poll with durable timers and growing intervals (the poll activity writes progress, and on success
 *   copies the videos into our bucket) -> settle at the exact price and finish the job, or refund and fail.
 *
 * A job ends `succeeded` or `failed` in the read model; the workflow itself completes either way. Timers
 * and activity results are in history, so a worker (or API) restart resumes the job where it was, and the
 * settlement's idempotency keys make a retried step charge once.
 */
import { CancellationScope, isCancellation, proxyActivities, sleep } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';
import type { VideoPollOutcome } from '../activities/videos';
import type { UsageRecord } from '../domain/request-accounting';
import type { VideoJobError, VideoJobSpec } from '../domain/video-jobs';
import { findGatewayError, mayFallBack } from '../activities/failures';
import { InternalError, ServiceUnavailableError } from '../core/errors';

/**
 * Database steps: quick and idempotent, so retried until they succeed (a refused reservation is not
 * retried: it is an answer). A job's books must close whatever our database went through.
 */
const books = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * Submission: the activity sets each retry's delay from the upstream's answer (or exponential with jitter).
 * It heartbeats every second, so a worker that dies mid-submission is noticed in seconds; the retry finds
 * the kept operation id, or repeats the submission under the same idempotency key.
 */
const submitter = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 4 },
});

/** One poll, including the copy of finished videos into our bucket (large files: a generous ceiling; heartbeats every second). */
const poller = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '15 seconds', maximumAttempts: 10 },
});

/** Reporting the job's end to the Playground: its message may be written a moment after the job started. */
const playground = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 8 },
});

/** Between rounds of a step that failed for a reason of our own (storage, database, a worker that died). */
const OWN_FAILURE_PAUSE_MS = 30_000;

const FIRST_POLL_MS = 1_000;
const MAX_POLL_MS = 15_000;
const POLL_BACKOFF = 1.5;
/** A job still processing after this long is given up (and refunded). */
const JOB_DEADLINE_MS = 3 * 60 * 60_000;

export interface VideoGenerationInput {
  jobId: string;
  workspaceId: string;
  apiKeyId: string | null;
  spec: VideoJobSpec;
}

export interface VideoGenerationResult {
  status: 'succeeded' | 'failed';
  modelUsed: string | null;
  creditsUsedMicro: number;
  error?: VideoJobError;
}

export async function videoGenerationWorkflow(input: VideoGenerationInput): Promise<VideoGenerationResult> {
  const result = await runJob(input);
  // A job from the Playground finishes its chat message now, not when someone next reads the chat; should
  // this report fail for good, reading the chat finishes the message all the same.
  if (input.spec.playground) {
    await playground.finishPlaygroundVideo({ jobId: input.jobId }).catch((err) => {
      if (isCancellation(err)) throw err;
    });
  }
  return result;
}

async function runJob(input: VideoGenerationInput): Promise<VideoGenerationResult> {
  const startedAt = Date.now();
  const { chain } = input.spec;
  const usage = (model: string | null, depth: number, status: 'succeeded' | 'failed'): UsageRecord => ({
    requestId: input.jobId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, endpoint: 'videos.generations',
    modelRequested: chain[0], modelUsed: model, fallbackDepth: depth, status, inputTokens: 0, outputTokens: 0,
    latencyMs: Date.now() - startedAt, userId: input.spec.playground?.userId ?? null,
  });
  const fail = async (reservationId: string | null, model: string | null, depth: number, error: VideoJobError): Promise<VideoGenerationResult> => {
    await books.failVideoJob({ jobId: input.jobId, reservationId, error, usage: usage(model, depth, 'failed') });
    return { status: 'failed', modelUsed: null, creditsUsedMicro: 0, error };
  };

  let lastError: VideoJobError | null = null;
  // The hop's hold while it is neither settled nor given back: a cancelled job gives it back and fails.
  let open: { reservationId: string; model: string; depth: number } | null = null;
  try {
    for (let depth = 0; depth < chain.length; depth++) {
      const model = chain[depth];
      const plan = await books.planVideoHop({ jobId: input.jobId, model, spec: input.spec });
      if (!plan.ok) {
        // The requested model's refusal is the answer; a fallback model that cannot take the job is skipped.
        if (depth === 0) return await fail(null, model, depth, plan.error);
        continue;
      }
      const reservationId = `${input.jobId}:${depth}`;
      open = { reservationId, model, depth };
      try {
        await books.reserveCredits({ reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, amountMicro: plan.estimateMicro, requestId: input.jobId, model });
      } catch (err) {
        if (isCancellation(err)) throw err;
        open = null;
        return await fail(null, model, depth, errorOf(err, 'credits_not_reserved'));
      }

      let operationId: string;
      try {
        ({ operationId } = await throughOwnFailures(() => submitter.submitVideo({
          jobId: input.jobId, depth, model, spec: input.spec, params: plan.params, simulate: depth === 0 ? input.spec.simulate : undefined,
        })));
      } catch (err) {
        if (isCancellation(err)) throw err;
        await books.releaseCredits({ reservationId, reason: 'video submission failed' });
        open = null;
        lastError = errorOf(err, 'upstream_error');
        if (mayFallBack(err)) continue;
        return await fail(null, model, depth, lastError);
      }
      await books.markVideoJobProcessing({ jobId: input.jobId, model });

      const outcome = await followJob(input, model, operationId);
      if (outcome.status === 'failed') {
        const failed = await fail(reservationId, model, depth, outcome.error);
        open = null;
        return failed;
      }
      const settled = await books.completeVideoJob({
        jobId: input.jobId, reservationId, model, params: plan.params, videos: outcome.videos, usage: usage(model, depth, 'succeeded'),
      });
      open = null;
      return { status: 'succeeded', modelUsed: model, creditsUsedMicro: settled.chargedMicro };
    }
  } catch (err) {
    if (isCancellation(err)) {
      const hop = open;
      await CancellationScope.nonCancellable(() => fail(hop?.reservationId ?? null, hop?.model ?? null, hop?.depth ?? 0, { code: 'cancelled', message: 'The job was cancelled.' }));
    }
    throw err;
  }
  return fail(null, null, Math.max(0, chain.length - 1), lastError ?? { code: 'no_model_available', message: 'No model in the fallback chain could take this job.' });
}

/**
 * Polls until the upstream job ends, waiting longer between polls as it runs. Failures of our own (storage
 * down while a finished video is copied, the database, a worker that died) never end the job: it waits
 * them out until the job's deadline; only the provider's own errors do.
 */
async function followJob(input: VideoGenerationInput, model: string, operationId: string): Promise<Exclude<VideoPollOutcome, { status: 'processing' }>> {
  const deadline = Date.now() + JOB_DEADLINE_MS;
  const timedOut = { status: 'failed' as const, error: { code: 'video_timeout', message: `The video did not finish within ${JOB_DEADLINE_MS / 3_600_000} hours.` } };
  let delay = FIRST_POLL_MS;
  for (;;) {
    await sleep(delay);
    let outcome: VideoPollOutcome;
    try {
      outcome = await poller.pollVideo({ jobId: input.jobId, workspaceId: input.workspaceId, model, operationId });
    } catch (err) {
      if (isCancellation(err)) throw err;
      if (!isOwnFailure(err)) return { status: 'failed', error: errorOf(err, 'upstream_error') };
      if (Date.now() > deadline) return timedOut;
      delay = OWN_FAILURE_PAUSE_MS;
      continue;
    }
    if (outcome.status !== 'processing') return outcome;
    if (Date.now() > deadline) return timedOut;
    delay = Math.min(Math.round(delay * POLL_BACKOFF), MAX_POLL_MS);
  }
}

/** Runs a step again (after a pause) for as long as it fails for a reason of our own; the provider's errors are thrown. */
async function throughOwnFailures<T>(step: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (isCancellation(err) || !isOwnFailure(err)) throw err;
      await sleep(OWN_FAILURE_PAUSE_MS);
    }
  }
}

/**
 * A failure of ours rather than the provider's or the caller's: an untyped or internal error, an outage of
 * one of our stores (storage, database), or an activity that timed out without a gateway error (its worker died).
 */
function isOwnFailure(err: unknown): boolean {
  const error = findGatewayError(err);
  return error === null || error instanceof InternalError || error instanceof ServiceUnavailableError;
}

/** The job's error as the client sees it: the provider's own message, never our internals (hosts, addresses). */
function errorOf(err: unknown, fallbackCode: string): VideoJobError {
  const error = findGatewayError(err);
  if (error && !isOwnFailure(err)) return { code: error.code ?? fallbackCode, message: error.message };
  return { code: 'internal_error', message: 'The gateway could not complete the job; nothing was charged for it.' };
}
