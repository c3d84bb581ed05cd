import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { GatewayActivities } from '../activities';

const { inspectStores } = proxyActivities<GatewayActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 milliseconds' },
});

export interface PingResult {
  pong: true;
  workflowId: string;
  runId: string;
  databaseTime: string;
  models: number;
}

/** The smallest end-to-end path: API -> workflow -> activity (Postgres) -> result. */
export async function pingWorkflow(): Promise<PingResult> {
  const stores = await inspectStores();
  const info = workflowInfo();
  return { pong: true, workflowId: info.workflowId, runId: info.runId, ...stores };
}
