/**
 * One hop of a request as one activity: hold its credits, call its model, settle the exact charge. The
 * rules every hop activity follows (the plain one, the chat stream, the image stream) live here once:
 *
 * - The hold is idempotent on the reservation id (`<workflow id>:<depth>`): a retried or re-run activity
 *   finds the hold it took before instead of taking another.
 * - A model is only called on a hold that is `held`, or on one this same request already settled (a run
 *   replayed after its worker died re-runs a hop whose marker was lost: the answer is made again, the
 *   charge stays the recorded one). A hold given back (the workflow released it after a failed call, the
 *   run was cancelled, the sweeper closed it) is never called on: the hop is over.
 * - The hold and the settlement are retried in the activity for a while (a database outage). A hold that
 *   still fails fails the hop (the workflow gives back whatever may have been held); a settlement that
 *   still fails leaves the activity with the answer unsettled, and the workflow settles it with the ledger's
 *   unbounded retries. Settling is idempotent, so settling twice never charges twice.
 *
 * Pure of Temporal and the database: the activities pass their own steps in (and tests scripted ones).
 */
import { GatewayError, type SerializedGatewayError } from '../core/errors';
import { log } from '../core/log';
import type { UsageRecord } from '../domain/request-accounting';
import type { Endpoint } from '../endpoints/types';
import type { PayloadRef } from './request-io';

/** Who holds and what for: the fields of a hop's hold that the request (not the hop's call) gives. */
export interface HopHold {
  reservationId: string;
  workspaceId: string;
  apiKeyId: string | null;
  allowedModels: string[] | null;
}

/** Everything a hold needs: the hop's model and the request's body priced at it. */
export interface HoldInput extends HopHold {
  endpoint: Endpoint;
  model: string;
  body: PayloadRef<unknown>;
  requestId: string;
}

/** The usage record's fixed fields and when the request started (its latency), to settle in the activity. */
export interface HopSettlement {
  reservationId: string;
  usage: Omit<UsageRecord, 'status' | 'inputTokens' | 'outputTokens' | 'units' | 'errorCode' | 'latencyMs'>;
  /** When the request started (ms). */
  startedAt: number;
}

/** A hold as the ledger answered it: a refusal, or the reservation as it stands now. */
export type HoldAnswer =
  | { ok: true; estimateMicro: number; status: 'held' | 'settled' | 'released'; requestId: string | null; chargedMicro: number | null }
  | { ok: false; reason: string; error: SerializedGatewayError; endsChain: boolean };

/**
 * A hop that called no model: `refused` (nothing held: the model is unfit for the request, or the balance or
 * the key's cost cap refused the hold, which `endsChain`), or `closed` (its hold was given back earlier).
 */
export type HopDenied =
  | { denied: 'refused'; model: string; reason: string; error: SerializedGatewayError; endsChain: boolean }
  | { denied: 'closed'; model: string };

/** Whether the hop may call its model on this hold: null to go on, or why not. */
export function denialOf(hold: HoldAnswer, hop: { model: string; requestId: string }): HopDenied | null {
  if (!hold.ok) return { denied: 'refused', model: hop.model, reason: hold.reason, error: hold.error, endsChain: hold.endsChain };
  if (hold.status === 'held') return null;
  if (hold.status === 'settled' && hold.requestId === hop.requestId) return null;
  return { denied: 'closed', model: hop.model };
}

/** How long a hop's ledger call (its hold, its settlement) is retried through a store's outage. */
export const LEDGER_PATIENCE_MS = 10_000;

/**
 * Runs an idempotent ledger call, retrying failures of our own stores (not the gateway's answers, such as a
 * refused hold) for up to `patienceMs` or until `stopped()`; then the last failure is thrown.
 */
export async function patiently<T>(fn: () => Promise<T>, opts: { patienceMs: number; stopped?: () => boolean }): Promise<T> {
  const giveUpAt = Date.now() + opts.patienceMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 4_000)) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof GatewayError || Date.now() >= giveUpAt || opts.stopped?.()) throw err;
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, giveUpAt - Date.now()))));
    }
  }
}

/** Settles patiently (see `patiently`); null when it gave up (the caller hands the settlement to its workflow). */
export async function settlePatiently<T>(settle: () => Promise<T>, opts: { patienceMs: number; stopped?: () => boolean; gaveUp: (err: unknown) => void }): Promise<T | null> {
  try {
    return await patiently(settle, opts);
  } catch (err) {
    opts.gaveUp(err);
    return null;
  }
}

/** The steps of one hop: hold, call, settle (real ones in the activities, scripted ones in tests). */
export interface HopSteps<C extends { chargeMicro: number }> {
  hold(): Promise<HoldAnswer>;
  call(): Promise<C>;
  /** Records the usage with the charge; `called` is what the call returned. */
  settle(called: C): Promise<{ chargedMicro: number }>;
  /** Waited for after the call, before settling (a first hop waits for its run: activities/first-hop.ts). */
  beforeSettle?(): Promise<void>;
  settlePatienceMs?: number;
}

/** What a hop that called its model returns: the call's outcome and, when settled here, the charge recorded. */
export type HopCalled<C> = C & { model: string; settledMicro: number | null };

/**
 * One hop: hold, call (only on a hold that allows it), settle. A failed call throws (the workflow gives the
 * hold back and may fall back); a refused or closed hold is returned, with nothing called.
 */
export async function serveHop<C extends { chargeMicro: number }>(hop: { model: string; requestId: string }, steps: HopSteps<C>): Promise<HopCalled<C> | HopDenied> {
  const denied = denialOf(await steps.hold(), hop);
  if (denied) return denied;
  const called = await steps.call();
  await steps.beforeSettle?.();
  const settled = await settlePatiently(() => steps.settle(called), {
    patienceMs: steps.settlePatienceMs ?? LEDGER_PATIENCE_MS,
    gaveUp: (err) => log.warn({ err, model: hop.model, requestId: hop.requestId }, 'a hop could not record its usage; its workflow settles it'),
  });
  return { ...called, model: hop.model, settledMicro: settled?.chargedMicro ?? null };
}
