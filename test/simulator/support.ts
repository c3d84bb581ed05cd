/** Shared helpers for the simulated provider's tests. */
import { expect } from 'chai';
import { UpstreamError } from '../../core/errors';
import { createSimulatedProvider, SimulatedTuning } from '../../simulator';
import type { CallContext, Provider } from '../../providers/types';

export function simulated(tuning: SimulatedTuning = {}, headers?: Record<string, string>): Provider {
  return createSimulatedProvider({ id: 'simulated', baseUrl: 'simulated://local', headers }, { streamDelayMs: 0, ...tuning });
}

export function ctx(extra: Partial<CallContext> = {}): CallContext {
  return { requestId: 'req_test', ...extra };
}

/** Awaits `action` and returns the UpstreamError it must throw. */
export async function upstreamFailure(action: () => Promise<unknown>): Promise<UpstreamError> {
  try {
    await action();
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  expect.fail('expected an UpstreamError');
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
