/**
 * Names shared by the budget watcher workflow and the activity that signals it (no SDK imports, so the
 * client side can use them without pulling in workflow code).
 */
export const SPEND_CHANGED_SIGNAL = 'budgetSpendChanged';
export const WATCHER_STATUS_QUERY = 'budgetWatcherStatus';

export interface SpendChanged {
  /** The billing cycle the settlement belongs to. */
  cycle: string;
}

export function budgetWatcherId(workspaceId: string): string {
  return `budget-${workspaceId}`;
}

export function alertDeliveryWorkflowId(d: { alertId: string; cycle: string; channel: string }): string {
  return `budget-alert-${d.alertId}-${d.cycle}-${d.channel}`;
}
