/**
 * Waiting for a request workflow's outcome. When the run was started eagerly on this process's own worker,
 * its result sink hands the outcome over in-process (worker/result-broker.ts); otherwise, or if the run
 * moved to another worker, the server is asked the ordinary way.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { Workflow, WorkflowResultType } from '@temporalio/common';
import type { ResultBroker } from '../../worker/result-broker';

/** How long an eagerly started run may take before the server is asked as well. */
const IN_PROCESS_GRACE_MS = 5_000;

export function expectOutcome(results: ResultBroker | null, workflowId: string) {
  return results?.expect<unknown>(workflowId) ?? null;
}

export async function awaitOutcome<W extends Workflow, T = WorkflowResultType<W>>(handle: WorkflowHandle<W> & { eagerlyStarted?: boolean }, expectation: ReturnType<typeof expectOutcome>): Promise<T> {
  if (!expectation || !handle.eagerlyStarted) {
    expectation?.cancel();
    return (await handle.result()) as T;
  }
  let timer: NodeJS.Timeout | undefined;
  const fromServer = new Promise<void>((resolve) => { timer = setTimeout(resolve, IN_PROCESS_GRACE_MS); }).then(() => handle.result() as Promise<T>);
  fromServer.catch(() => undefined); // when the in-process outcome wins, this one is not awaited
  try {
    return await Promise.race([expectation.promise as Promise<T>, fromServer]);
  } finally {
    clearTimeout(timer);
    expectation.cancel();
  }
}
