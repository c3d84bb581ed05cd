/**
 * A test gateway whose OpenAI provider is a fake upstream (for the real-provider paths) next to the
 * simulated models, with one funded tenant: the set-up of the API tests of OpenAI's surface.
 */
import type { ProviderOptions } from '../../providers/types';
import { FakeUpstream } from './fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from './gateway';

export interface FakeOpenAIGateway {
  fake: FakeUpstream;
  gateway: TestGateway;
  tenant: Tenant;
  /** Real speech from sim-tts (it transcribes back to exactly its text). */
  speech(text: string): Promise<Buffer>;
}

/** Registers the suite's before/after hooks; the returned object is filled in before the first test. */
export function useFakeOpenAIGateway(opts: { credits?: number; providerOverrides?: Record<string, Partial<ProviderOptions>>; env?: NodeJS.ProcessEnv } = {}): FakeOpenAIGateway {
  const ctx = { fake: new FakeUpstream() } as FakeOpenAIGateway;
  before(async function () {
    this.timeout(180_000);
    await ctx.fake.start();
    ctx.gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${ctx.fake.url}/v1`, OPENAI_API_KEY: 'o', ...(opts.env ?? {}) },
      providerOverrides: opts.providerOverrides,
    });
    ctx.tenant = await ctx.gateway.newTenant({ credits: opts.credits ?? 100 });
    ctx.speech = async (text) => Buffer.from(await (await ctx.tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input: text, response_format: 'wav' })).arrayBuffer());
  });
  after(async () => {
    await ctx.gateway?.stop();
    await ctx.fake.stop();
  });
  beforeEach(() => ctx.fake.reset());
  return ctx;
}
