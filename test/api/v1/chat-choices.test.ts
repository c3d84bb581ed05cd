import { expect } from 'chai';
import OpenAI from 'openai';
import { loadCatalogFiles } from '../../../catalog/load';
import { chatCost } from '../../../catalog/pricing';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import anthropicMessage from '../../providers/anthropic/fixtures/message-text.json';
import openaiCompletion from '../../providers/openai-compatible/fixtures/chat-completion.json';

describe('POST /v1/chat/completions: n, logprobs and the other per-model parameters', function () {
  this.timeout(120_000);
  const fake = new FakeUpstream();
  let gateway: TestGateway;
  let tenant: Tenant;
  const hi = [{ role: 'user' as const, content: 'Name a colour.' }];

  before(async function () {
    this.timeout(180_000);
    await fake.start();
    gateway = await startTestGateway({
      env: { ANTHROPIC_BASE_URL: `${fake.url}/anthropic`, ANTHROPIC_API_KEY: 'a', OPENAI_BASE_URL: `${fake.url}/openai/v1`, OPENAI_API_KEY: 'o' },
    });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(async () => {
    await gateway?.stop();
    await fake.stop();
  });
  beforeEach(() => fake.reset());

  async function refusal(body: Record<string, unknown>): Promise<{ status: number; error: { param: string; code: string; message: string } }> {
    const res = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, error: ((await res.json()) as { error: { param: string; code: string; message: string } }).error };
  }

  it('answers n different choices from a model whose host serves n (sim-chat)', async () => {
    const { data, response } = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi, n: 3 }).withResponse();
    expect(data.choices.map((c) => c.index)).to.deep.equal([0, 1, 2]);
    expect(new Set(data.choices.map((c) => c.message.content)).size).to.equal(3);
    const single = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi });
    expect(data.choices[0].message.content).to.equal(single.choices[0].message.content);
    expect(data.usage!.completion_tokens).to.be.greaterThan(2 * single.usage!.completion_tokens);
    expect(data.usage!.prompt_tokens).to.equal(single.usage!.prompt_tokens);
    expect(Number(response.headers.get('x-credits-used'))).to.be.greaterThan(0);
  });

  it('answers logprobs with top_logprobs on every choice', async () => {
    const data = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi, n: 2, logprobs: true, top_logprobs: 2 });
    for (const choice of data.choices) {
      const tokens = choice.logprobs!.content!;
      expect(tokens.map((t) => t.token).join('')).to.equal(choice.message.content);
      expect(tokens[0].top_logprobs).to.have.length(2);
      expect(choice.logprobs!.refusal).to.equal(null);
    }
    const plain = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi, logprobs: false });
    expect(plain.choices[0].logprobs).to.equal(null);
  });

  it('streams n choices by index, with their log probabilities, and a finish chunk for each', async () => {
    const stream = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi, n: 2, logprobs: true, stream: true });
    const texts = ['', ''];
    const finished: number[] = [];
    let tokens = 0;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        texts[choice.index] += choice.delta.content ?? '';
        tokens += choice.logprobs?.content?.length ?? 0;
        if (choice.finish_reason) finished.push(choice.index);
      }
    }
    const whole = await tenant.client.chat.completions.create({ model: 'sim-chat', messages: hi, n: 2 });
    expect(texts).to.deep.equal(whole.choices.map((c) => c.message.content));
    expect(finished.sort()).to.deep.equal([0, 1]);
    expect(tokens).to.equal(whole.usage!.completion_tokens);
  });

  it('fans out where the host has no n (Anthropic): one upstream call per choice, each charged', async () => {
    fake.on('POST /anthropic/v1/messages', { json: anthropicMessage });
    const { data, response } = await tenant.client.chat.completions.create({ model: 'claude-sonnet-4-5', messages: hi, n: 3 }).withResponse();
    expect(fake.received('POST /anthropic/v1/messages')).to.have.length(3);
    expect(data.choices.map((c) => [c.index, c.message.content])).to.deep.equal([0, 1, 2].map((i) => [i, 'Hello! How can I help you today?']));
    expect(data.usage).to.deep.include({ prompt_tokens: 36, completion_tokens: 27 });
    const record = loadCatalogFiles().find((r) => r.slug === 'claude-sonnet-4-5')!;
    expect(Number(response.headers.get('x-credits-used'))).to.equal(chatCost(record, { inputTokens: 36, outputTokens: 27 }) / 1_000_000);
  });

  it('carries reasoning_effort, verbosity and logit_bias to the upstream that has them', async () => {
    fake.on('POST /openai/v1/chat/completions', { json: openaiCompletion });
    await tenant.client.chat.completions.create({ model: 'gpt-5', messages: hi, reasoning_effort: 'minimal', verbosity: 'low', n: 2 });
    await tenant.client.chat.completions.create({ model: 'gpt-4o', messages: hi, logit_bias: { '1734': -100 }, logprobs: true, top_logprobs: 1 });
    const [gpt5, gpt4o] = fake.received('POST /openai/v1/chat/completions');
    expect(gpt5.json).to.include({ reasoning_effort: 'minimal', verbosity: 'low', n: 2 });
    expect(gpt4o.json).to.deep.include({ logit_bias: { '1734': -100 }, logprobs: true, top_logprobs: 1 });
  });

  it('refuses what the model does not take, naming the parameter, before any upstream call', async () => {
    expect(await refusal({ model: 'claude-sonnet-4-5', messages: hi, logprobs: true })).to.deep.include({ status: 400 });
    expect((await refusal({ model: 'claude-sonnet-4-5', messages: hi, logprobs: true })).error).to.include({ param: 'logprobs', code: 'unsupported_parameter' });
    expect((await refusal({ model: 'claude-sonnet-4-5', messages: hi, n: 9 })).error).to.include({ param: 'n', code: 'invalid_value' });
    expect((await refusal({ model: 'gpt-4o', messages: hi, verbosity: 'low' })).error).to.include({ param: 'verbosity', code: 'unsupported_parameter' });
    expect((await refusal({ model: 'gpt-4o', messages: hi, reasoning_effort: 'low' })).error).to.include({ param: 'reasoning_effort', code: 'unsupported_parameter' });
    expect((await refusal({ model: 'sim-chat', messages: hi, top_logprobs: 2 })).error).to.include({ param: 'top_logprobs', code: 'invalid_value' });
    expect((await refusal({ model: 'sim-chat', messages: hi, n: 129 })).error).to.include({ param: 'n', code: 'invalid_value' });
    expect(fake.requests).to.have.length(0);
  });

  it('lets the official client see a refused parameter as a BadRequestError', async () => {
    try {
      await tenant.client.chat.completions.create({ model: 'gpt-5', messages: hi, logprobs: true });
      expect.fail('should be refused');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    }
  });
});
