/**
 * The run of a Playground message as its workflow's history tells it: held, called (each attempt, with
 * its failure), fell back, settled or released. Read through the gateway's own Temporal client, whose
 * codec decrypts the payloads and failure messages that the server stores encrypted.
 */
import type { Client } from '@temporalio/client';
import { decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { requestWorkflowId } from '../../workflows/contracts';

export interface TimelineStep {
  step: 'started' | 'held' | 'called' | 'retried' | 'released' | 'settled' | 'failed' | 'completed' | 'priced';
  at: number;
  detail?: string;
}

const LABELS: Record<string, TimelineStep['step']> = {
  holdCredits: 'held', callModel: 'called', streamChat: 'called', releaseCredits: 'released', settleRequest: 'settled', failRequest: 'failed', priceChatUsage: 'priced',
};

export async function runTimeline(client: Client, requestId: string): Promise<TimelineStep[]> {
  const history = await client.workflow.getHandle(requestWorkflowId(requestId)).fetchHistory();
  const steps: TimelineStep[] = [];
  const converter = client.options.loadedDataConverter;
  const scheduled = new Map<string, string>();
  for (const event of history.events ?? []) {
    const at = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
    if (event.workflowExecutionStartedEventAttributes) steps.push({ step: 'started', at });
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const payload = marker.details?.data?.payloads?.[0]?.data;
      const data = payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : {};
      const failure = await decodeOptionalFailureToOptionalError(converter, marker.failure);
      steps.push(step(data.activity_type, at, failure?.message, data.attempt));
    }
    const sched = event.activityTaskScheduledEventAttributes;
    if (sched) scheduled.set(String(event.eventId), sched.activityType?.name ?? '');
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) steps.push(step(scheduled.get(String(completed.scheduledEventId)) ?? '', at));
    const failed = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    if (failed) {
      const failure = await decodeOptionalFailureToOptionalError(converter, failed.failure);
      steps.push(step(scheduled.get(String(failed.scheduledEventId)) ?? '', at, failure?.message ?? 'failed'));
    }
    if (event.workflowExecutionCompletedEventAttributes) steps.push({ step: 'completed', at });
    if (event.workflowExecutionFailedEventAttributes) steps.push({ step: 'failed', at });
  }
  return steps;
}

function step(activity: string, at: number, failure?: string, attempt?: number): TimelineStep {
  const label = LABELS[activity] ?? 'called';
  if (failure) return { step: label === 'called' ? 'retried' : 'failed', at, detail: `${activity}${attempt ? ` attempt ${attempt}` : ''}: ${failure}` };
  return { step: label, at, detail: activity };
}
