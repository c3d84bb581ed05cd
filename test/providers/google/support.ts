/** Small helpers shared by this family's adapter tests. */
import { expect } from 'chai';
import { UpstreamError } from '../../../domain/errors';
import type { CallContext } from '../../../providers/types';

export const ctx: CallContext = { requestId: 'req_test', timeoutMs: 5_000 };

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const parts: T[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** Awaits a promise that must reject with an UpstreamError and returns it for further checks. */
export async function upstreamFailure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  expect.fail('expected an UpstreamError');
}
