/** Reads a workflow's history the way an operator sees it in the Web UI: its steps, in order. */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex, decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';

export interface HistoryStep {
  /** Local activity type, or the event type for other events. */
  name: string;
  attempt?: number;
  failure?: string;
  /** The activity's result as recorded in its marker (a hop's model, outcome and charge). */
  result?: any;
}

export async function localActivitySteps(client: Client, workflowId: string): Promise<HistoryStep[]> {
  const handle = client.workflow.getHandle(workflowId);
  // The API may answer from the worker before the run's completion reached the server.
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  const steps: HistoryStep[] = [];
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') continue;
    const payload = marker.details?.data?.payloads?.[0]?.data;
    const data = payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : {};
    // Failure messages are encrypted in the history; the client's codec reads them as the Web UI's codec endpoint does.
    const failure = await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, marker.failure);
    const payloads = marker.details?.result?.payloads;
    const result = payloads?.length ? await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, payloads) : undefined;
    steps.push({ name: data.activity_type, attempt: data.attempt, failure: failure?.message, result });
  }
  return steps;
}
