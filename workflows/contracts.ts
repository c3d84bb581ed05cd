/**
 * What workflows share with their callers (API, activities, worker, CLI, the local stack): workflow ids,
 * signal and query names, and the search attributes operators filter on. Free of SDK imports and of
 * workflow code, so any layer may import it; it is the one file lint lets lower layers take from here.
 */

/** A search attribute key, structurally the SDK's `SearchAttributeKey<'KEYWORD'>`. */
export interface KeywordAttribute { readonly name: string; readonly type: 'KEYWORD' }

const keyword = (name: string): KeywordAttribute => ({ name, type: 'KEYWORD' });

/** Custom search attributes every request workflow carries (the dev server registers them at start). */
export const RequestIdKey = keyword('GatewayRequestId');
export const WorkspaceIdKey = keyword('GatewayWorkspaceId');
export const ApiKeyIdKey = keyword('GatewayApiKeyId');
export const ModelKey = keyword('GatewayModel');
export const EndpointKey = keyword('GatewayEndpoint');
export const GATEWAY_SEARCH_ATTRIBUTES: readonly KeywordAttribute[] = [RequestIdKey, WorkspaceIdKey, ApiKeyIdKey, ModelKey, EndpointKey];

/** Workflow ids. */
export const requestWorkflowId = (requestId: string): string => `req-${requestId}`;
/** A batch's run, and the run of its line `index` (its holds are `<line run id>:<depth>`, as a request's). */
export const batchWorkflowId = (batchId: string): string => `batch-${batchId}`;
export const batchLineWorkflowId = (batchId: string, index: number): string => `batch-${batchId}-line-${index}`;
/**
 * The batch whose line `workflowId` names (its line ids, `batch-<id>-line-<n>`, name the line's holds whether
 * the line ran as its own run or inside its batch's: workflows/batch.ts); null for any other id.
 */
export function batchOfLineWorkflowId(workflowId: string): string | null {
  const found = /^batch-(.+)-line-\d+$/.exec(workflowId);
  return found ? found[1] : null;
}
/** Signalled when a batch is asked to stop (its status is `cancelling` in the database first). */
export const BATCH_CANCEL_SIGNAL = 'batchCancel';
export const pingWorkflowId = (requestId: string): string => `ping-${requestId}`;
/** Prefix of the workflow id an Idempotency-Key names (the rest is derived from workspace, scope and key). */
export const IDEMPOTENT_REQUEST_PREFIX = 'idem';
export const MONTHLY_GRANT_SCHEDULE_ID = 'monthly-credit-grants';

/** The reservation id of a request's hop: `<workflow id>:<depth>` (the hold sweeper reads the workflow id back from it). */
export function hopReservationId(workflowId: string, depth: number): string {
  return `${workflowId}:${depth}`;
}

export function budgetWatcherId(workspaceId: string): string {
  return `budget-${workspaceId}`;
}

export function alertDeliveryWorkflowId(d: { alertId: string; cycle: string; channel: string }): string {
  return `budget-alert-${d.alertId}-${d.cycle}-${d.channel}`;
}

/** The budget watcher's signal (a settlement changed the workspace's spend) and status query. */
export const SPEND_CHANGED_SIGNAL = 'budgetSpendChanged';
export const WATCHER_STATUS_QUERY = 'budgetWatcherStatus';

export interface SpendChanged {
  /** The billing cycle the settlement belongs to. */
  cycle: string;
}

/**
 * The task queue of scheduled work (monthly grants, the hold sweeper): one fixed name, polled by every
 * worker process whatever its own TEMPORAL_TASK_QUEUE, so starting a worker elsewhere never re-points a
 * schedule. It is the default TEMPORAL_TASK_QUEUE, so a worker on the default queue serves both with one
 * Worker (one workflow thread: ~55 MiB less per process); a worker of another queue runs a second one for it.
 */
export const DEFAULT_TASK_QUEUE = 'gateway';
export const SCHEDULED_TASK_QUEUE = DEFAULT_TASK_QUEUE;
export const HOLD_SWEEPER_SCHEDULE_ID = 'hold-sweeper';

/** A workspace's automatic top-up workflow, signalled by settlements (its balance may have crossed the threshold) and by failed payments. */
export function autoTopUpWorkflowId(workspaceId: string): string {
  return `auto-topup-${workspaceId}`;
}
export const BALANCE_LOW_SIGNAL = 'autoTopUpBalanceLow';
export const PAYMENT_FAILED_SIGNAL = 'autoTopUpPaymentFailed';
export const AUTO_TOPUP_STATUS_QUERY = 'autoTopUpStatus';

export interface PaymentFailed {
  paymentId: string;
}
