/**
 * The activity boundary: every registered activity runs inside this wrapper, so whatever it throws leaves
 * through the one failure policy (activities/failures.ts) with the attempt number that policy needs.
 */
import { activityInfo } from '@temporalio/activity';
import { toActivityFailure } from './failures';

type ActivityFunction = (...args: never[]) => Promise<unknown>;

/** Sees every activity failure as thrown, before the policy converts it (metrics: upstream errors by provider and model). */
export interface ActivityObserver {
  failed(activity: string, input: unknown, err: unknown): void;
}

export function withFailurePolicy<T extends Record<string, ActivityFunction>>(activities: T, observer?: ActivityObserver): T {
  const wrapped: Record<string, ActivityFunction> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        observer?.failed(name, args[0], err);
        throw toActivityFailure(err, currentAttempt());
      }
    };
  }
  return wrapped as T;
}

/** The running activity's attempt (1 when called outside an activity, e.g. directly from a test). */
function currentAttempt(): number {
  try {
    return activityInfo().attempt;
  } catch {
    return 1;
  }
}
