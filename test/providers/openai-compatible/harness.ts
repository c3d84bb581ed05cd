/** Shared set-up for the openai-compatible adapter tests: a fake host and a provider pointed at it. */
import { expect } from 'chai';
import { UpstreamError, type UpstreamFailureKind } from '../../../core/errors';
import { createOpenAICompatibleProvider, type OpenAICompatibleOptions } from '../../../providers/openai-compatible';
import type { CallContext, Provider } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';

export const API_KEY = 'sk-test-123';

export const ctx: CallContext = { requestId: 'req_test' };

/** Starts a fake host before the suite's tests and stops it after; routes are cleared between tests. */
export function useFakeOpenAI(): { upstream: FakeUpstream; provider: (overrides?: Partial<OpenAICompatibleOptions>) => Provider } {
  const upstream = new FakeUpstream();
  before(async () => { await upstream.start(); });
  afterEach(() => upstream.reset());
  after(async () => { await upstream.stop(); });
  return {
    upstream,
    provider: (overrides = {}) => createOpenAICompatibleProvider({ id: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: API_KEY, ...overrides }),
  };
}

/** Awaits a promise that must fail with an UpstreamError of the given kind, and returns the error. */
export async function expectUpstreamError(promise: Promise<unknown>, kind: UpstreamFailureKind): Promise<UpstreamError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, 'expected the call to fail').to.be.instanceOf(UpstreamError);
  const error = caught as UpstreamError;
  expect(error.kind, error.message).to.equal(kind);
  return error;
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
