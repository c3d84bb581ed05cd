/**
 * Every activity the worker registers, built from injected dependencies so tests can call the same
 * functions directly. Activities stay thin: the work lives in domain/ and providers/.
 */
import type { ActivityDeps } from './deps';
export type { ActivityDeps } from './deps';
import { createRequestActivities } from './requests';
import { createStreamActivities as createChatStreamActivities } from './stream-chat';
import { createImageStreamActivities } from './stream-images';
import type { StreamRegistry } from './stream-registry';
import { withFailurePolicy } from './failure-policy';
import { createSystemActivities } from './system';
import { createBillingActivities } from './billing';
import { createBudgetActivities } from './budget';
import { createVideoActivities } from './videos';
import { createHoldActivities } from './holds';
import { createPlaygroundActivities } from './playground';
import { createPaymentActivities } from './payments';
import { createBatchActivities } from './batches';
import { createNativeBatchActivities } from './native-batches';
import { beginPlainHop, type ServeHopInput, type ServeHopResult } from './requests';
import { beginChatStreamHop, type StreamChatInput, type StreamChatOutcome, type StreamWatch } from './stream-chat';
import type { FirstHop, FirstHops } from './first-hop';
import type { HopDenied } from './hop';


export function createActivities(deps: ActivityDeps) {
  return withFailurePolicy({
    ...createSystemActivities(deps),
    ...createRequestActivities(deps),
    ...createBillingActivities(deps),
    ...createBudgetActivities(deps),
    ...createVideoActivities(deps),
    ...createHoldActivities(deps),
    ...createPlaygroundActivities(deps),
    ...createPaymentActivities(deps),
    ...createBatchActivities(deps),
    ...createNativeBatchActivities(deps),
  }, deps.observer);
}

export type GatewayActivities = ReturnType<typeof createActivities>;

/** Activities of the per-API-process stream worker (they write to connections this process holds). */
export function createStreamActivities(deps: ActivityDeps & { streams: StreamRegistry }) {
  return withFailurePolicy({ ...createChatStreamActivities(deps), ...createImageStreamActivities(deps) }, deps.observer);
}

export type StreamActivities = ReturnType<typeof createStreamActivities>;

/** Begins a request's first hop in the API process while its run starts (activities/first-hop.ts). */
export interface FirstHopStarter {
  /** First hops begun here that their activities have not claimed yet: how far the worker lags. */
  waiting(): number;
  plain(input: ServeHopInput): FirstHop<ServeHopResult, null>;
  chatStream(input: StreamChatInput): FirstHop<StreamChatOutcome | HopDenied, StreamWatch>;
}

export function firstHopStarter(deps: ActivityDeps & { streams: StreamRegistry; firstHops: FirstHops }): FirstHopStarter {
  return {
    waiting: () => deps.firstHops.size,
    plain: (input) => beginPlainHop(deps, input),
    chatStream: (input) => beginChatStreamHop(deps, input),
  };
}
