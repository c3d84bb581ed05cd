/**
 * Steps shared by the request workflows: the ledger's local activities, holding credits for one hop of the
 * fallback chain, deciding whether a failure may fall back, and closing the books of a request no model
 * could serve.
 */
import { ApplicationFailure, CancellationScope, isCancellation, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import { findGatewayError, mayFallBack } from '../activities/failures';
import type { GatewayActivities } from '../activities';
import type { Endpoint } from '../endpoints/types';
import type { PayloadRef } from '../activities/request-io';
import type { CallResult } from '../activities/requests';
import type { SimulationDirective } from '../providers/types';

/**
 * Ledger steps are idempotent (keyed by reservation id), so they are retried until they succeed: a hold
 * must end settled or released, and a database outage of minutes only delays the books. Refusals (402, the
 * cost cap) are answers, not failures, and are never retried.
 */
const LEDGER_OPTIONS = {
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds' },
} as const;

const MODEL_CALL_OPTIONS = {
  // One attempt's ceiling; the provider's own deadline is shorter.
  startToCloseTimeout: '10 minutes',
  // The activity sets each retry's delay (exponential with jitter, or the upstream's Retry-After).
  retry: { initialInterval: '250 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3 },
} as const;

/**
 * Ledger steps and model calls run as local activities: in-process, no task round trips through the
 * server, and (with eager start) the whole request in one workflow task. `remote` runs them as ordinary
 * activities instead; the benchmark compares the two.
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
}

export interface HopRecord {
  model: string;
  outcome: 'served' | 'skipped' | 'failed';
  reason?: string;
}

export function usageBase(input: ModelRequestInput) {
  return {
    requestId: input.requestId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, endpoint: input.endpoint,
    modelRequested: input.chain[0], clientRequestId: input.clientRequestId ?? null, userId: input.userId ?? null,
  };
}

/** The reservation id of a hop's hold: `<workflow id>:<depth>` (the hold sweeper reads the workflow id back from it). */
export function holdId(depth: number): string {
  return `${workflowInfo().workflowId}:${depth}`;
}

/**
 * Prices the request at this hop's model, re-checks what the key may use and holds the credits. Returns the
 * reservation id, or null when this hop is skipped (`stop` when the chain must end). At the first hop
 * every refusal is the client's answer and is thrown.
 */
export async function holdForHop(input: ModelRequestInput, depth: number, hops: HopRecord[]): Promise<string | null | 'stop'> {
  const model = input.chain[depth];
  const reservationId = holdId(depth);
  let hold;
  try {
    hold = await activitiesFor(input).ledger.holdCredits({
      endpoint: input.endpoint, model, body: input.body, allowedModels: input.allowedModels,
      reservationId, workspaceId: input.workspaceId, apiKeyId: input.apiKeyId, requestId: input.requestId,
    });
  } catch (err) {
    // The requested model's refusal (402, cost cap) is the client's answer; a fallback's ends the chain.
    if (depth === 0) throw err;
    hops.push({ model, outcome: 'skipped', reason: findGatewayError(err)?.message ?? 'credits could not be reserved' });
    return 'stop';
  }
  if (!hold.ok) {
    if (depth === 0) throw ApplicationFailure.create({ message: hold.error.message, type: hold.error.name, nonRetryable: true, details: [hold.error] });
    hops.push({ model, outcome: 'skipped', reason: hold.reason });
    return null;
  }
  return reservationId;
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
}

export interface ChainResult<T> {
  detail: T;
  modelUsed: string;
  fallbackFrom: string | null;
  fallbackDepth: number;
  creditsUsedMicro: number;
  hops: HopRecord[];
}

export interface ModelRequestResult extends Omit<ChainResult<unknown>, 'detail'> {
  response: CallResult['response'];
}

export interface ChainCall<T> {
  /** Why a hold is given back when this kind of call fails (shown in the ledger's audit trail). */
  releaseReason?: string;
  /** Calls one hop's model (a local activity, or an activity in the API process holding a stream). */
  call(model: string, depth: number, reservationId: string): Promise<HopServed<T>>;
  /**
   * A failed call that still produced something billable (a stream whose process died mid-answer): what
   * to settle instead of releasing the hold and falling back; null when nothing was produced.
   */
  billAfterFailure?(err: unknown, model: string): Promise<HopServed<T> | null>;
  /**
   * A failure that must end the request at once (after its own bookkeeping), instead of falling back or
   * being reported as the chain's last error. Returns true when it handled the failure.
   */
  abandonOn?(err: unknown, reservationId: string, depth: number): Promise<boolean>;
}

/**
 * The request's walk along [requested, ...fallback chain]: hold credits for a hop, call its model, and on
 * a failure whose error says it may fall back (throttling, 5xx, timeouts) give the hold back and try the
 * next; settle the first answer at its exact price (with its usage record). A chain no model served ends
 * with the last upstream error. Every request workflow (plain, image stream, chat stream) walks this way.
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
      // Open from the moment it is asked for: a run cancelled while the hold is taken still gives it back.
      open = holdId(depth);
      let reservationId: string | null | 'stop';
      try {
        reservationId = await holdForHop(input, depth, hops);
      } catch (err) {
        if (!isCancellation(err)) open = null; // refused: nothing was held
        throw err;
      }
      if (reservationId === 'stop' || reservationId === null) {
        open = null;
        if (reservationId === 'stop') break;
        continue;
      }

      let served: HopServed<T>;
      try {
        served = await chain.call(model, depth, reservationId);
      } catch (err) {
        if (isCancellation(err)) throw err;
        if (chain.abandonOn && (await chain.abandonOn(err, reservationId, depth))) {
          open = null;
          throw err;
        }
        const billable = chain.billAfterFailure ? await chain.billAfterFailure(err, model) : null;
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

      const settled = await ledger.settleRequest({
        reservationId,
        chargeMicro: served.chargeMicro,
        usage: {
          ...usageBase(input), modelUsed: model, fallbackDepth: depth, status: served.status,
          inputTokens: served.usage.inputTokens, outputTokens: served.usage.outputTokens, units: served.usage.units,
          latencyMs: Date.now() - startedAt, errorCode: served.errorCode ?? null,
        },
      });
      open = null;
      hops.push({ model, outcome: 'served' });
      return {
        detail: served.detail,
        modelUsed: model,
        fallbackFrom: depth > 0 ? input.chain[0] : null,
        fallbackDepth: depth,
        creditsUsedMicro: settled.chargedMicro,
        hops,
      };
    }
  } catch (err) {
    if (open) await giveBack(input, open, isCancellation(err) ? 'request cancelled' : 'request failed');
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

/** A served call's outcome as a hop: its stored response is what the caller gets. */
export function servedCall(outcome: CallResult): HopServed<CallResult['response']> {
  return { chargeMicro: outcome.chargeMicro, usage: outcome.usage, status: 'succeeded', detail: outcome.response };
}

/** The plain result shape of a request (response, model used, fallback, charge). */
export function requestResult({ detail, ...rest }: ChainResult<CallResult['response']>): ModelRequestResult {
  return { ...rest, response: detail };
}
