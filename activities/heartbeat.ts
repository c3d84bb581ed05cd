/**
 * Heartbeats on a timer while an activity works, so a worker that dies is noticed within the activity's
 * (short) heartbeat timeout, however long one step takes (an upstream that thinks before its first token,
 * a large copy). `details` gives what each heartbeat carries: a heartbeat replaces the last one's details.
 */
import { Context } from '@temporalio/activity';

const EVERY_MS = 1_000;

export async function heartbeating<T>(work: () => Promise<T>, details: () => unknown = () => undefined): Promise<T> {
  const context = Context.current();
  context.heartbeat(details());
  const timer = setInterval(() => context.heartbeat(details()), EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
