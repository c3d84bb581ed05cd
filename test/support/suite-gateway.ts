/**
 * A suite's gateway and funded tenant, started before its first test and stopped after its last; and the
 * same with OpenAI's provider pointed at a fake upstream (for the real-provider paths) next to the
 * simulated models.
 */
import type { ProviderOptions } from '../../providers/types';
import { FakeUpstream } from './fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from './gateway';

export interface SuiteGatewayOptions {
  credits?: number;
  env?: NodeJS.ProcessEnv;
  providerOverrides?: Record<string, Partial<ProviderOptions>>;
}

export interface SuiteGateway {
  gateway: TestGateway;
  tenant: Tenant;
  /** Real speech from sim-tts (it transcribes back to exactly its text). */
  speech(text: string): Promise<Buffer>;
}

/** Registers the suite's hooks; the returned object is filled in before the first test. */
export function useGateway(opts: SuiteGatewayOptions = {}, beforeStart?: () => Promise<NodeJS.ProcessEnv>, afterStop?: () => Promise<void>): SuiteGateway {
  const ctx = {} as SuiteGateway;
  before(async function () {
    this.timeout(180_000);
    const env = { ...(opts.env ?? {}), ...(beforeStart ? await beforeStart() : {}) };
    ctx.gateway = await startTestGateway({ env, providerOverrides: opts.providerOverrides });
    ctx.tenant = await ctx.gateway.newTenant({ credits: opts.credits ?? 100 });
    ctx.speech = async (text) => Buffer.from(await (await ctx.tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input: text, response_format: 'wav' })).arrayBuffer());
  });
  after(async () => {
    await ctx.gateway?.stop();
    await afterStop?.();
  });
  return ctx;
}

export interface FakeOpenAIGateway extends SuiteGateway {
  fake: FakeUpstream;
}

export function useFakeOpenAIGateway(opts: SuiteGatewayOptions = {}): FakeOpenAIGateway {
  const fake = new FakeUpstream();
  const ctx = useGateway(opts, async () => {
    await fake.start();
    return { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'o' };
  }, () => fake.stop()) as FakeOpenAIGateway;
  ctx.fake = fake;
  beforeEach(() => fake.reset());
  return ctx;
}
