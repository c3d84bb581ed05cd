/** Helpers for provider adapter tests: reading a stream whole, and catching the UpstreamError a call must raise. */
import { expect } from 'chai';
import { UpstreamError } from '../../core/errors';

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
