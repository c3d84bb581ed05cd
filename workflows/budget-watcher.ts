/**
 * One watcher per workspace (id `budget-<workspaceId>`), started or poked by signal-with-start after each
 * settlement. It evaluates the cycle's spend against the workspace's alerts and starts one delivery
 * workflow per due (alert, channel): deliveries retry on their own, so a dead SMTP server or webhook
 * neither loses the alert nor holds up the watcher (or any request).
 *
 * Signals that arrive while an evaluation runs collapse into one more evaluation. Idle for a while, the
 * watcher ends; the next settlement starts it again. It continues as new when its history grows.
 */
import {
  allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, ParentClosePolicy, proxyActivities, setHandler, startChild, workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { GatewayActivities } from '../activities';
import type { DueDelivery } from '../domain/budget-evaluation';
import { budgetAlertDeliveryWorkflow } from './budget-alert-delivery';
import { WorkspaceIdKey } from './contracts';
import { alertDeliveryWorkflowId, SPEND_CHANGED_SIGNAL, WATCHER_STATUS_QUERY, type SpendChanged } from './contracts';

const budget = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** Without a signal for this long the watcher ends (a settlement starts a new one). */
const IDLE_TIMEOUT = '1 hour';
/** Continue as new before the history gets long (the server also suggests it). */
export const MAX_HISTORY_EVENTS = 5_000;

export const spendChangedSignal = defineSignal<[SpendChanged]>(SPEND_CHANGED_SIGNAL);

export interface WatcherStatus {
  evaluations: number;
  /** True while an evaluation (and the deliveries it starts) is under way. */
  busy: boolean;
  deliveriesStarted: number;
  pendingCycles: string[];
}
export const watcherStatusQuery = defineQuery<WatcherStatus>(WATCHER_STATUS_QUERY);

export interface BudgetWatcherInput {
  workspaceId: string;
  /** Carried across continue-as-new. */
  pendingCycles?: string[];
  /** Deliveries this chain started, per cycle (`alertId:channel`), so a due pair is started once. */
  started?: Record<string, string[]>;
  evaluations?: number;
  /** History length that makes the watcher continue as new (default MAX_HISTORY_EVENTS). */
  maxHistoryEvents?: number;
}

export async function budgetWatcherWorkflow(input: BudgetWatcherInput): Promise<WatcherStatus> {
  const pending = new Set(input.pendingCycles ?? []);
  const started = new Map(Object.entries(input.started ?? {}).map(([cycle, keys]) => [cycle, new Set(keys)]));
  let evaluations = input.evaluations ?? 0;
  let busy = false;
  const status = (): WatcherStatus => ({ evaluations, busy, deliveriesStarted: [...started.values()].reduce((n, s) => n + s.size, 0), pendingCycles: [...pending] });

  setHandler(spendChangedSignal, ({ cycle }) => { pending.add(cycle); });
  setHandler(watcherStatusQuery, status);

  for (;;) {
    if (!(await condition(() => pending.size > 0, IDLE_TIMEOUT))) return status();
    busy = true;
    for (const cycle of [...pending].sort()) {
      pending.delete(cycle);
      const { due } = await budget.evaluateBudgetAlerts({ workspaceId: input.workspaceId, cycle });
      evaluations++;
      const startedThisCycle = started.get(cycle) ?? new Set<string>();
      started.set(cycle, startedThisCycle);
      for (const delivery of due) {
        const key = `${delivery.alertId}:${delivery.channel}`;
        if (startedThisCycle.has(key)) continue;
        await startDelivery(delivery);
        startedThisCycle.add(key);
      }
    }
    busy = false;
    // Only the latest two cycles can still be signalled.
    for (const cycle of [...started.keys()].sort().slice(0, -2)) started.delete(cycle);

    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > (input.maxHistoryEvents ?? MAX_HISTORY_EVENTS)) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof budgetWatcherWorkflow>({
        workspaceId: input.workspaceId, pendingCycles: [...pending], evaluations, maxHistoryEvents: input.maxHistoryEvents,
        started: Object.fromEntries([...started].map(([cycle, keys]) => [cycle, [...keys]])),
      });
    }
  }
}

/**
 * Starts the delivery as a workflow of its own that outlives the watcher (ABANDON), under an id naming
 * the alert, cycle and channel: a second start of the same delivery is refused by Temporal itself.
 */
async function startDelivery(delivery: DueDelivery): Promise<void> {
  try {
    await startChild(budgetAlertDeliveryWorkflow, {
      workflowId: alertDeliveryWorkflowId(delivery),
      args: [delivery],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      typedSearchAttributes: [{ key: WorkspaceIdKey, value: delivery.payload.workspace.id }],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
