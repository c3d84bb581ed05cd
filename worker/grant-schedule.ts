/**
 * The Temporal Schedule behind the monthly credit grant (00:00 UTC on the 1st), created idempotently when
 * a worker starts, and the on-demand run of one cycle (`gateway schedule trigger`). Both run on
 * SCHEDULED_TASK_QUEUE, whichever worker created the schedule.
 */
import type { Client, ScheduleDescription, ScheduleOptions } from '@temporalio/client';
import type { MonthlyCreditGrantsInput, MonthlyCreditGrantsResult, monthlyCreditGrantsWorkflow } from '../workflows/monthly-credit-grants';
import { MONTHLY_GRANT_SCHEDULE_ID, SCHEDULED_TASK_QUEUE } from '../workflows/contracts';
import { ensureSchedule, type ScheduleChange } from './schedules';

export { MONTHLY_GRANT_SCHEDULE_ID };
export const MONTHLY_GRANT_WORKFLOW = 'monthlyCreditGrantsWorkflow';

export function monthlyGrantSchedule(): ScheduleOptions {
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
      taskQueue: SCHEDULED_TASK_QUEUE,
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

/** Creates the schedule, or brings an existing one's spec and action in line (a changed time, an old task queue). */
export async function ensureMonthlyGrantSchedule(client: Client): Promise<ScheduleChange> {
  const wanted = monthlyGrantSchedule();
  return ensureSchedule(client, wanted, (existing) => matches(existing, wanted));
}

export function grantRunWorkflowId(cycle: string): string {
  return `credit-grants-${cycle}`;
}

/**
 * Runs one cycle's grant now and waits for it. A run of the same cycle already in progress is joined, not
 * duplicated; a finished one may run again and grants nothing twice.
 */
export async function runGrantCycle(client: Client, opts: { cycle: string; batchSize?: number; batchesPerRun?: number }): Promise<MonthlyCreditGrantsResult & { workflowId: string }> {
  const workflowId = grantRunWorkflowId(opts.cycle);
  const input: MonthlyCreditGrantsInput = { cycle: opts.cycle, batchSize: opts.batchSize, batchesPerRun: opts.batchesPerRun };
  const handle = await client.workflow.start<typeof monthlyCreditGrantsWorkflow>(MONTHLY_GRANT_WORKFLOW, {
    workflowId,
    taskQueue: SCHEDULED_TASK_QUEUE,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const result = await handle.result();
  return { ...result, workflowId };
}
