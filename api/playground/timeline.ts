/**
 * The run of a Playground message as its workflow's history tells it: held, called (each attempt, with
 * its failure), fell back, settled or released. Each hop is one activity (activities/hop.ts) whose result
 * names the model and the charge; its steps are read back from that result. Read through the gateway's
 * own Temporal client, whose codec decrypts the payloads and failure messages that the server stores
 * encrypted.
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex, decodeOptionalFailureToOptionalError } from '@temporalio/common/lib/internal-non-workflow';
import { requestWorkflowId } from '../../workflows/contracts';

export interface TimelineStep {
  step: 'started' | 'held' | 'called' | 'retried' | 'skipped' | 'released' | 'settled' | 'failed' | 'completed' | 'priced';
  at: number;
  detail?: string;
}

const LABELS: Record<string, TimelineStep['step']> = {
  releaseCredits: 'released', settleRequest: 'settled', failRequest: 'failed', priceChatUsage: 'priced',
};

/** Activities that are a whole hop: hold, call, settle. */
const HOPS = new Set(['serveHop', 'streamChat', 'serveImageHopWithProgress']);

/** What a hop's result tells (activities/hop.ts, activities/stream-chat.ts); absent when it failed. */
interface HopResult {
  model?: string;
  denied?: 'refused' | 'closed';
  reason?: string;
  ending?: string;
  chargeMicro?: number;
  settledMicro?: number | null;
  nothingHeld?: boolean;
}

export async function runTimeline(client: Client, requestId: string): Promise<TimelineStep[]> {
  const history = await client.workflow.getHandle(requestWorkflowId(requestId)).fetchHistory();
  const steps: TimelineStep[] = [];
  const converter = client.options.loadedDataConverter;
  const scheduled = new Map<string, { type: string; model?: string }>();
  const decode = async (payloads: Payload[] | null | undefined) => (payloads?.length ? decodeFromPayloadsAtIndex<HopResult>(converter, 0, payloads).catch(() => undefined) : undefined);
  for (const event of history.events ?? []) {
    const at = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
    if (event.workflowExecutionStartedEventAttributes) steps.push({ step: 'started', at });
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity') {
      const payload = marker.details?.data?.payloads?.[0]?.data;
      const data = payload ? JSON.parse(Buffer.from(payload).toString('utf8')) : {};
      const failure = await decodeOptionalFailureToOptionalError(converter, marker.failure);
      const result = failure ? undefined : await decode(marker.details?.result?.payloads);
      steps.push(...stepsOf(data.activity_type, at, { failure: failure?.message, attempt: data.attempt, result }));
    }
    const sched = event.activityTaskScheduledEventAttributes;
    if (sched) {
      const type = sched.activityType?.name ?? '';
      scheduled.set(String(event.eventId), { type, model: HOPS.has(type) ? (await decode(sched.input?.payloads))?.model : undefined });
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const activity = scheduled.get(String(completed.scheduledEventId));
      const result = await decode(completed.result?.payloads);
      steps.push(...stepsOf(activity?.type ?? '', at, { result: result && { model: activity?.model, ...result } }));
    }
    const failed = event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
    if (failed) {
      const failure = await decodeOptionalFailureToOptionalError(converter, failed.failure);
      const activity = scheduled.get(String(failed.scheduledEventId));
      steps.push(...stepsOf(activity?.type ?? '', at, { failure: failure?.message ?? 'failed', result: { model: activity?.model } }));
    }
    if (event.workflowExecutionCompletedEventAttributes) steps.push({ step: 'completed', at });
    if (event.workflowExecutionFailedEventAttributes) steps.push({ step: 'failed', at });
  }
  return steps;
}

function stepsOf(activity: string, at: number, opts: { failure?: string; attempt?: number; result?: HopResult }): TimelineStep[] {
  const attempt = opts.attempt ? ` attempt ${opts.attempt}` : '';
  if (!HOPS.has(activity)) {
    const label = LABELS[activity] ?? 'called';
    if (opts.failure) return [{ step: label === 'called' ? 'retried' : 'failed', at, detail: `${activity}${attempt}: ${opts.failure}` }];
    return [{ step: label, at, detail: activity }];
  }
  // A hop: held, then called (its failure, when the call failed), then settled when the hop settled itself.
  const result = opts.result ?? {};
  const model = result.model ? ` ${result.model}` : '';
  if (opts.failure) return [{ step: 'held', at, detail: `${activity}${model}` }, { step: 'retried', at, detail: `${activity}${model}${attempt}: ${opts.failure}` }];
  // A stream asked of a process that does not hold the connection did nothing (the next one is asked).
  if (result.ending === 'not_here' || result.nothingHeld) return [];
  if (result.denied) return [{ step: 'skipped', at, detail: `${activity}${model}: ${result.denied === 'closed' ? 'its hold had already ended' : result.reason}` }];
  const steps: TimelineStep[] = [
    { step: 'held', at, detail: `${activity}${model}` },
    { step: 'called', at, detail: `${activity}${model}${result.ending ? ` ${result.ending}` : ''}` },
  ];
  if (typeof result.settledMicro === 'number') steps.push({ step: 'settled', at, detail: `${activity}${model}: ${result.settledMicro} micro-credits` });
  return steps;
}
