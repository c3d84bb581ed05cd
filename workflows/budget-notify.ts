/**
 * For request workflows (chat, embeddings, images, video, ...): after settling, tell the workspace's
 * budget watcher that spend changed. A local activity that returns at once for a workspace without
 * alerts; it never waits on a delivery, and its failure never fails the request.
 */
import { log, proxyLocalActivities } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';

const watcher = proxyLocalActivities<GatewayActivities>({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '100 milliseconds', backoffCoefficient: 2, maximumInterval: '1 second', maximumAttempts: 3 },
});

export async function notifyBudgetWatcher(workspaceId: string): Promise<void> {
  try {
    await watcher.notifyBudgetWatcher({ workspaceId });
  } catch (err) {
    log.warn('could not signal the budget watcher', { workspaceId, error: err instanceof Error ? err.message : String(err) });
  }
}
