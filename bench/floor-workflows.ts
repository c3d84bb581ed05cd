/**
 * The benchmark's floor (bench/floor.ts): the least a durable request can cost on this Temporal server.
 * Bundled for the floor's own worker only; nothing else imports it.
 */
import { proxyLocalActivities } from '@temporalio/workflow';

const { noop } = proxyLocalActivities<{ noop(): Promise<string> }>({ startToCloseTimeout: '10 seconds' });

export async function emptyWorkflow(): Promise<string> {
  return 'ok';
}

export async function oneLocalActivityWorkflow(): Promise<string> {
  return noop();
}
