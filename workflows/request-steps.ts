/**
 * Steps shared by the request workflows: the walk along the fallback chain (each hop one activity that
 * holds, calls and settles: activities/hop.ts), deciding whether a failure may fall back, giving holds
 * back, and closing the books of a request no model could serve.
 */
import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { findGatewayError, isRunStopped, mayFallBack } from '../activities/failures';
import type { GatewayActivities } from '../activities';
import type { Endpoint } from '../endpoints/types';
import type { PayloadRef } from '../activities/request-io';
import type { CallResult, RequestAnswer, ServeHopResult } from '../activities/requests';
import type { HopDenied, HopHold, HopSettlement } from '../activities/hop';
import type { SimulationDirective } from '../providers/types';
import { hopTicket, usageBase } from './hop-inputs';

export { usageBase } from './hop-inputs';

/**
 * Ledger steps are idempotent (keyed by reservation id), so they are retried until they succeed: a hold
 * must end settled or released, and a database outage of minutes only delays the books. Refusals (402, the
 * cost cap) are answers, not failures, and are never retried.
 */
const LEDGER_OPTIONS = {
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
} as const;

/** A hop (hold, call, settle): the model call's retries; the hold and settlement inside are idempotent. */
const MODEL_CALL_OPTIONS = {
  // One attempt's ceiling; the provider's own deadline is shorter.
  startToCloseTimeout: '10 minutes',
  // The activity sets each retry's delay (exponential with jitter, or the upstream's Retry-After).
  retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
} as const;

/**
 * Hops and ledger steps run as local activities: in-process, no task round trips through the server, and
 * (with eager start) the whole request in one workflow task. `remote` runs them as ordinary activities
 * instead; the benchmark compares the two.
 */
export type ActivityMode = 'local' | 'remote';

const local = {
  ledger: proxyLocalActivities<GatewayActivities>(LEDGER_OPTIONS),
  models: proxyLocalActivities<GatewayActivities>(MODEL_CALL_OPTIONS),
};
const remote = {
  ledger: proxyActivities<GatewayActivities>(LEDGER_OPTIONS),
  models: proxyActivities<GatewayActivities>(MODEL_CALL_OPTIONS),
};

export function activitiesFor(input: { activityMode?: ActivityMode }) {
  return input.activityMode === 'remote' ? remote : local;
}

/** The ledger's local activities (for workflows that do not switch modes). */
export const ledger = local.ledger;

export interface ModelRequestInput {
  requestId: string;
  workspaceId: string;
  apiKeyId: string | null;
  endpoint: Endpoint;
  /** [requested model, ...its fallback chain]. */
  chain: string[];
  allowedModels: string[] | null;
  body: PayloadRef<unknown>;
  /** Unix seconds the API accepted the request. */
  created: number;
  clientRequestId?: string | null;
  simulate?: SimulationDirective;
  activityMode?: ActivityMode;
  /** The member who asked in the Playground (no key), kept on the usage record. */
  userId?: string | null;
  /** A line of a batch (workflows/batch.ts): its usage record names both, and it is priced at the batch rate. */
  batch?: { batchId: string; customId: string };
}

export interface HopRecord {
  model: string;
  outcome: 'served' | 'skipped' | 'failed';
  reason?: string;
}

/** Whether a hop called no model (its hold was refused, or had already ended). */
export function isDenied(outcome: object): outcome is HopDenied {
  return 'denied' in outcome;
}

/** Records a request no model served and fails the run with the last upstream error. */
export async function failExhausted(input: ModelRequestInput, hops: HopRecord[], lastFailure: unknown, startedAt: number): Promise<never> {
  const error = findGatewayError(lastFailure);
  await activitiesFor(input).ledger.failRequest({
    reservationId: null,
    reason: error?.message ?? 'no model could serve the request',
    usage: {
      ...usageBase(input), modelUsed: null, fallbackDepth: Math.max(0, hops.length - 1), status: 'failed',
      inputTokens: 0, outputTokens: 0, errorCode: error?.code ?? null, latencyMs: Date.now() - startedAt,
    },
  });
  if (lastFailure) throw lastFailure;
  const message = 'No model in the fallback chain could serve this request.';
  throw ApplicationFailure.create({
    message, type: 'InvalidRequestError', nonRetryable: true,
    details: [{ name: 'InvalidRequestError', message, status: 400, type: 'invalid_request_error', code: 'no_model_available', param: 'model', headers: {} }],
  });
}

/** What a hop that served (fully, or cut off after its first byte) hands to settlement. */
export interface HopServed<T> {
  chargeMicro: number;
  usage: { inputTokens: number; outputTokens: number; units?: Record<string, number> };
  /** `cancelled`: the answer was cut off (client gone, upstream broke mid-stream); what was made is charged. */
  status: 'succeeded' | 'cancelled';
  errorCode?: string | null;
  /** What the caller gets back (a stored response, a stream's ending). */
  detail: T;
  /** What was charged, when the hop's activity settled it itself; otherwise the walk settles. */
  settledMicro?: number | null;
}

export interface ChainResult<T> {
  detail: T;
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  hops: HopRecord[];
}

export interface ModelRequestResult extends RequestAnswer {
  hops: HopRecord[];
}

/** What a hop's activity needs to hold and settle by itself. */
export interface HopTicket {
  hold: HopHold;
  settlement: HopSettlement;
}

export interface ChainCall<T> {
  /**
   * The run the hops' holds are named after (`<run id>:<depth>`): this run's id unless a run serves a
   * request of its own that has its own (a batch's line: workflows/batch.ts).
   */
  holdsOf?: string;
  /** Why a hold is given back when this kind of call fails (shown in the ledger's audit trail). */
  releaseReason?: string;
  /**
   * One hop: hold the credits, call the model, and (usually) settle, in one activity (a local activity, or
   * one in the API process holding a stream). A hold that was refused or had already ended comes back
   * denied, with nothing called and nothing held.
   */
  call(model: string, depth: number, ticket: HopTicket): Promise<HopServed<T> | HopDenied>;
  /**
   * A failed call that still produced something billable (a stream whose process died mid-answer): what
   * to settle instead of releasing the hold and falling back; null when nothing was produced.
   */
  billAfterFailure?(err: unknown, model: string, reservationId: string): Promise<HopServed<T> | null>;
  /**
   * A failure that must end the request at once (after its own bookkeeping), instead of falling back or
   * being reported as the chain's last error. Returns true when it handled the failure.
   */
  abandonOn?(err: unknown, reservationId: string, depth: number): Promise<boolean>;
}

/**
 * The request's walk along [requested, ...fallback chain]: each hop holds its credits, calls its model and
 * settles the answer at its exact price (with its usage record) in one activity; on a failure whose error
 * says it may fall back (throttling, 5xx, timeouts) the hop's hold is given back and the next model tried.
 * A refused hold is the client's answer at the requested model and skips a fallback. A chain no model
 * served ends with the last upstream error. Every request workflow (plain, image stream, chat stream)
 * walks this way.
 */
export async function serveAlongChain<T>(input: ModelRequestInput, chain: ChainCall<T>): Promise<ChainResult<T>> {
  const { ledger } = activitiesFor(input);
  const startedAt = Date.now();
  const hops: HopRecord[] = [];
  let lastFailure: unknown = null;
  // The hop's hold while it is neither settled nor given back: whatever ends the run early gives it back.
  let open: string | null = null;

  try {
    for (let depth = 0; depth < input.chain.length; depth++) {
      const model = input.chain[depth];
      const ticket = hopTicket(input, depth, startedAt, chain.holdsOf ?? workflowInfo().workflowId);
      const reservationId = ticket.hold.reservationId;
      // Open from the moment the hop starts: a run cancelled or failing while the hop runs gives it back.
      open = reservationId;
      let served: HopServed<T> | HopDenied;
      try {
        served = await chain.call(model, depth, ticket);
      } catch (err) {
        // A hop that found its run over (terminated, timed out: this worker has not heard yet) ends the walk as a cancellation does.
        if (isCancellation(err) || isRunStopped(err)) throw err;
        if (chain.abandonOn && (await chain.abandonOn(err, reservationId, depth))) {
          open = null;
          throw err;
        }
        const billable = chain.billAfterFailure ? await chain.billAfterFailure(err, model, reservationId) : null;
        if (!billable) {
          await ledger.releaseCredits({ reservationId, reason: chain.releaseReason ?? 'model call failed' });
          open = null;
          hops.push({ model, outcome: 'failed', reason: findGatewayError(err)?.message ?? String(err) });
          lastFailure = err;
          if (mayFallBack(err)) continue;
          break; // caller errors never fall back
        }
        served = billable;
      }

      if (isDenied(served)) {
        open = null; // nothing was held, or the hold had already ended
        if (served.denied === 'closed') {
          // A re-run of a hop that had already ended unserved (its run replayed after a crash): walk on as it did.
          hops.push({ model, outcome: 'failed', reason: 'its hold had already been given back' });
          continue;
        }
        // The requested model's refusal (402, the cost cap, unfit for the request) is the client's answer.
        if (depth === 0) throw ApplicationFailure.create({ message: served.error.message, type: served.error.name, nonRetryable: true, details: [served.error] });
        hops.push({ model, outcome: 'skipped', reason: served.reason });
        if (served.endsChain) break;
        continue;
      }

      const chargedMicro = served.settledMicro ?? (await ledger.settleRequest({
        reservationId,
        chargeMicro: served.chargeMicro,
        usage: {
          ...ticket.settlement.usage, status: served.status,
          inputTokens: served.usage.inputTokens, outputTokens: served.usage.outputTokens, units: served.usage.units,
          latencyMs: Date.now() - startedAt, errorCode: served.errorCode ?? null,
        },
      })).chargedMicro;
      open = null;
      hops.push({ model, outcome: 'served' });
      return {
        detail: served.detail,
        modelUsed: model,
        fallbackFrom: depth > 0 ? input.chain[0] : null,
        fallbackDepth: depth,
        creditsUsedMicro: chargedMicro,
        hops,
      };
    }
  } catch (err) {
    // A run found over gives nothing back itself: whoever saw it end does (the API answering it, audited; or the hold sweeper).
    if (open && !isRunStopped(err)) await giveBack(input, open, isCancellation(err) ? 'request cancelled' : 'request failed');
    throw err;
  }
  return failExhausted(input, hops, lastFailure, startedAt);
}

/**
 * Releases a hold on the way out of a run that failed or was cancelled (a hold that was never taken is a
 * no-op). It runs even in a cancelled run; a run terminated or timed out never gets here, and the hold
 * sweeper (workflows/hold-sweeper.ts) releases its hold instead.
 */
export async function giveBack(input: { activityMode?: ActivityMode }, reservationId: string, reason: string): Promise<void> {
  await CancellationScope.nonCancellable(() => activitiesFor(input).ledger.releaseCredits({ reservationId, reason }));
}

/** A hop's outcome as the walk takes it: a served call's stored response is what the caller gets. */
export function servedHop(outcome: ServeHopResult): HopServed<CallResult['response']> | HopDenied {
  if (isDenied(outcome)) return outcome;
  return { chargeMicro: outcome.chargeMicro, usage: outcome.usage, status: 'succeeded', detail: outcome.response, settledMicro: outcome.settledMicro };
}

/** The plain result shape of a request (response, model used, fallback, charge). */
export function requestResult({ detail, ...rest }: ChainResult<CallResult['response']>): ModelRequestResult {
  return { ...rest, response: detail };
}
