/**
 * The Temporal Schedule behind the monthly credit grant (00:00 UTC on the 1st), created idempotently when
 * a worker starts, and the on-demand run of one cycle (`gateway schedule trigger`).
 */
import { ScheduleAlreadyRunning, type Client, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/internal-non-workflow';
import { KEY_ID_METADATA } from '../infra/payload-codec';
import type { MonthlyCreditGrantsInput, MonthlyCreditGrantsResult, monthlyCreditGrantsWorkflow } from '../workflows/monthly-credit-grants';

import { MONTHLY_GRANT_SCHEDULE_ID } from '../workflows/contracts';

export { MONTHLY_GRANT_SCHEDULE_ID };
export const MONTHLY_GRANT_WORKFLOW = 'monthlyCreditGrantsWorkflow';

export function monthlyGrantSchedule(taskQueue: string): ScheduleOptions {
  return {
    scheduleId: MONTHLY_GRANT_SCHEDULE_ID,
    spec: {
      calendars: [{ comment: '00:00 UTC on the 1st of every month', second: 0, minute: 0, hour: 0, dayOfMonth: 1 }],
      timezone: 'UTC',
    },
    action: {
      type: 'startWorkflow',
      workflowType: MONTHLY_GRANT_WORKFLOW,
      // Temporal appends the scheduled time to this id; the run reads its cycle from that time.
      workflowId: MONTHLY_GRANT_SCHEDULE_ID,
      taskQueue,
      args: [{} satisfies MonthlyCreditGrantsInput],
    },
    policies: {
      // A run missed while the cluster was down still happens when it is back (within a week); two runs
      // never overlap, and one that comes due during another waits for it.
      catchupWindow: '7 days',
      overlap: 'BUFFER_ONE',
    },
  };
}

/** Whether an existing schedule already does what `wanted` says (so a worker start leaves it alone). */
function matches(existing: ScheduleDescription, wanted: ScheduleOptions): boolean {
  const cal = existing.spec.calendars ?? [];
  const single = (ranges: Array<{ start: number; end: number }>, value: number) => ranges.length === 1 && ranges[0].start === value && ranges[0].end === value;
  return existing.action.workflowType === wanted.action.workflowType
    && existing.action.taskQueue === wanted.action.taskQueue
    && (existing.spec.timezone ?? 'UTC') === 'UTC'
    && (existing.spec.intervals ?? []).length === 0
    && cal.length === 1
    && single(cal[0].second, 0) && single(cal[0].minute, 0) && single(cal[0].hour, 0) && single(cal[0].dayOfMonth, 1)
    && existing.policies.overlap === wanted.policies?.overlap;
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

/**
 * Creates the schedule; when it exists already, brings its spec and action in line (a new task queue, a
 * changed time, a new encryption key) and otherwise leaves it, paused state and notes included, as it is.
 */
export async function ensureMonthlyGrantSchedule(client: Client, taskQueue: string): Promise<'created' | 'updated' | 'unchanged'> {
  const wanted = monthlyGrantSchedule(taskQueue);
  try {
    await client.schedule.create(wanted);
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(MONTHLY_GRANT_SCHEDULE_ID);
  const existing = await handle.describe();
  if (matches(existing, wanted) && (await sealedWithCurrentKey(client, existing))) return 'unchanged';
  await handle.update((previous) => ({
    ...previous,
    spec: wanted.spec,
    action: wanted.action,
    policies: { ...previous.policies, ...wanted.policies },
  }));
  return 'updated';
}

export function grantRunWorkflowId(cycle: string): string {
  return `credit-grants-${cycle}`;
}

/**
 * Runs one cycle's grant now and waits for it. A run of the same cycle already in progress is joined, not
 * duplicated; a finished one may run again and grants nothing twice.
 */
export async function runGrantCycle(client: Client, opts: { taskQueue: string; cycle: string; batchSize?: number; batchesPerRun?: number }): Promise<MonthlyCreditGrantsResult & { workflowId: string }> {
  const workflowId = grantRunWorkflowId(opts.cycle);
  const input: MonthlyCreditGrantsInput = { cycle: opts.cycle, batchSize: opts.batchSize, batchesPerRun: opts.batchesPerRun };
  const handle = await client.workflow.start<typeof monthlyCreditGrantsWorkflow>(MONTHLY_GRANT_WORKFLOW, {
    workflowId,
    taskQueue: opts.taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const result = await handle.result();
  return { ...result, workflowId };
}
