/**
 * Temporal Schedules the workers keep in place: created at worker start, brought in line when their spec
 * or action changed, otherwise left alone (paused state and notes included). Every schedule starts its
 * runs on SCHEDULED_TASK_QUEUE, whatever task queue the starting worker serves.
 */
import { ScheduleAlreadyRunning, type Client, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/internal-non-workflow';
import { KEY_ID_METADATA } from '../infra/payload-codec';
import { HOLD_SWEEPER_SCHEDULE_ID, SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import type { SweepInput } from '../activities/holds';

export type ScheduleChange = 'created' | 'updated' | 'unchanged';

/** Creates `wanted`, or updates the existing schedule of its id unless `matches` says it already does the same. */
export async function ensureSchedule(client: Client, wanted: ScheduleOptions, matches: (existing: ScheduleDescription) => boolean): Promise<ScheduleChange> {
  try {
    await client.schedule.create(wanted);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(wanted.scheduleId);
  const existing = await handle.describe();
  if (matches(existing) && (await sealedWithCurrentKey(client, existing))) return 'unchanged';
  await handle.update((previous) => ({
    ...previous,
    spec: wanted.spec,
    action: wanted.action,
    policies: { ...previous.policies, ...wanted.policies },
  }));
  return 'updated';
}

/**
 * Whether the schedule's stored input is sealed with the key that encrypts now. A schedule keeps the
 * payloads it was written with, so after a key rotation it is rewritten under the new key, and the old key
 * can go once histories no longer need it.
 */
async function sealedWithCurrentKey(client: Client, existing: ScheduleDescription): Promise<boolean> {
  const stored = existing.raw.schedule?.action?.startWorkflow?.input?.payloads?.[0];
  const [fresh] = await encode(client.options.loadedDataConverter.payloadCodecs, [defaultPayloadConverter.toPayload({})]);
  const keyId = (p: Payload | null | undefined) => Buffer.from(p?.metadata?.[KEY_ID_METADATA] ?? []).toString();
  return keyId(stored) === keyId(fresh);
}

export const HOLD_SWEEPER_WORKFLOW = 'holdSweeperWorkflow';

export interface HoldSweeperSettings {
  /** Seconds between sweeps. */
  everySeconds: number;
  /** Holds younger than this are left to their runs. */
  minAgeSeconds: number;
}

export function holdSweeperSchedule(settings: HoldSweeperSettings): ScheduleOptions {
  return {
    scheduleId: HOLD_SWEEPER_SCHEDULE_ID,
    spec: { intervals: [{ every: settings.everySeconds * 1000 }] },
    action: {
      type: 'startWorkflow',
      workflowType: HOLD_SWEEPER_WORKFLOW,
      workflowId: HOLD_SWEEPER_SCHEDULE_ID,
      taskQueue: SCHEDULED_TASK_QUEUE,
      args: [{ minAgeSeconds: settings.minAgeSeconds } satisfies SweepInput],
    },
    // A sweep that is still going makes the next one unnecessary; one missed during an outage is not made up.
    policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
  };
}

export async function ensureHoldSweeperSchedule(client: Client, settings: HoldSweeperSettings): Promise<ScheduleChange> {
  const wanted = holdSweeperSchedule(settings);
  return ensureSchedule(client, wanted, (existing) => {
    const intervals = existing.spec.intervals ?? [];
    const args = (existing.action.type === 'startWorkflow' ? existing.action.args : []) as SweepInput[];
    return existing.action.workflowType === HOLD_SWEEPER_WORKFLOW
      && existing.action.taskQueue === SCHEDULED_TASK_QUEUE
      && intervals.length === 1 && Number(intervals[0].every) === settings.everySeconds * 1000
      && (existing.spec.calendars ?? []).length === 0
      && args[0]?.minAgeSeconds === settings.minAgeSeconds;
  });
}
