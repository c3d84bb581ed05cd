import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadCatalogFiles } from '../../catalog/load';
import type { ModelRecord } from '../../catalog/types';
import { UpstreamError } from '../../core/errors';
import type { Db } from '../../db/connection';
import { PostgresDeploymentState, RedisDeploymentState } from '../../domain/deployment-state';
import { modelAdapter, type ServedBy } from '../../endpoints/model-adapter';
import { connectRedisCounters, type RedisCounterClient } from '../../infra/redis';
import { providersFromEnv } from '../../main/providers';
import type { DeploymentState } from '../../providers/deployments';
import type { ProviderRegistry } from '../../providers/registry';
import type { ChatStreamPart } from '../../providers/types';
import { FakeUpstream, type FakeReply } from '../support/fake-upstream';
import { openTestDb } from '../support/db';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import completion from '../providers/openai-compatible/fixtures/chat-completion.json';
import streamText from '../providers/openai-compatible/fixtures/chat-stream-text.json';
import rateLimit from '../providers/openai-compatible/fixtures/error-rate-limit.json';
import serverError from '../providers/openai-compatible/fixtures/error-server.json';

/**
 * Routing among a model's deployments through the real adapters against two fake OpenAI-compatible hosts:
 * each deployment reached with its own key and upstream model name, throttled ones cooling down for every
 * registry sharing the state (Redis, or Postgres), rpm limits, the weighted split, and streams.
 */
describe('deployments of a model: routing', function () {
  this.timeout(120_000);
  const east = new FakeUpstream();
  const west = new FakeUpstream();
  const prefix = `test-${process.pid}-${randomBytes(4).toString('hex')}:`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deployments-'));
  const clients: RedisCounterClient[] = [];
  let db: Db;
  let record: ModelRecord;
  const hi = { messages: [{ role: 'user' as const, content: 'Hi' }] };
  const ctx = { requestId: 'req_routing' };

  before(async () => {
    await Promise.all([east.start(), west.start()]);
    db = await openTestDb();
    record = loadCatalogFiles().find((r) => r.slug === 'gpt-4o-mini')!;
  });
  after(async () => {
    for (const c of clients) await c.close();
    await Promise.all([east.stop(), west.stop()]);
    await db?.destroy();
    await deleteRedisKeys(prefix);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    east.reset();
    west.reset();
  });

  /** A deployments file for gpt-4o-mini over the two fakes (fresh deployment names: the shared state outlives a test). */
  function deploymentsFile(opts: { routing?: string; cooldownSeconds?: number; eastWeight?: number; westWeight?: number; eastRpm?: number; eastTpm?: number } = {}) {
    const tag = randomBytes(3).toString('hex');
    const names = { east: `east-${tag}`, west: `west-${tag}` };
    const file = path.join(dir, `${tag}.yaml`);
    fs.writeFileSync(file, [
      `cooldownSeconds: ${opts.cooldownSeconds ?? 60}`,
      'providers:',
      '  openai-east:',
      '    host: openai',
      `    baseUrl: ${east.url}/v1`,
      '    credentials: { apiKey: TEST_EAST_KEY }',
      '  openai-west:',
      '    host: openai',
      `    baseUrl: ${west.url}/v1`,
      '    credentials: { apiKey: TEST_WEST_KEY }',
      'models:',
      '  gpt-4o-mini:',
      `    routing: ${opts.routing ?? 'weighted'}`,
      '    deployments:',
      `      - { name: ${names.east}, provider: openai-east, model: mini-east, weight: ${opts.eastWeight ?? 1}${opts.eastRpm ? `, rpm: ${opts.eastRpm}` : ''}${opts.eastTpm ? `, tpm: ${opts.eastTpm}` : ''} }`,
      `      - { name: ${names.west}, provider: openai-west, model: mini-west, weight: ${opts.westWeight ?? 1} }`,
    ].join('\n'));
    return { file, names };
  }

  const env = (file: string) => ({ GATEWAY_DEPLOYMENTS_FILE: file, TEST_EAST_KEY: 'key-east', TEST_WEST_KEY: 'key-west', OPENAI_API_KEY: 'key-default' });

  /** A registry as one gateway process builds it, its routing state in `state`. */
  function registry(file: string, state?: DeploymentState): ProviderRegistry {
    const providers = providersFromEnv(env(file));
    if (state) providers.deployments!.useState(state);
    return providers;
  }

  async function redisState(): Promise<DeploymentState> {
    const client = connectRedisCounters(TEST_REDIS_URL, { keyPrefix: prefix });
    clients.push(client);
    expect(await client.connected(3000)).to.equal(true);
    return new RedisDeploymentState(client, new PostgresDeploymentState(db));
  }

  async function chat(providers: ProviderRegistry): Promise<{ content: string | null; deployment: string | null }> {
    const served: ServedBy = { deployment: null };
    const result = await modelAdapter({ providers, served }, record, 'chat').doGenerate(hi, ctx);
    return { content: result.content, deployment: served.deployment };
  }

  const answers = (fake: FakeUpstream, reply: FakeReply) => fake.on('POST /v1/chat/completions', reply);
  const calls = (fake: FakeUpstream) => fake.received('POST /v1/chat/completions');

  for (const store of ['redis', 'postgres'] as const) {
    it(`moves a throttled deployment's traffic to the other, and two registries sharing ${store} both keep off it while it cools down`, async () => {
      const { file, names } = deploymentsFile({ eastWeight: 1000, westWeight: 1 });
      const open = () => (store === 'redis' ? redisState() : Promise.resolve(new PostgresDeploymentState(db)));
      const [a, b] = [registry(file, await open()), registry(file, await open())];
      answers(east, { status: 429, json: rateLimit });
      answers(west, { json: completion });

      // East is first by weight: it answers 429, cools down, and west serves the same call.
      expect(await chat(a)).to.deep.equal({ content: completion.choices[0].message.content, deployment: names.west });
      expect(calls(east)).to.have.length(1);
      expect(calls(west)).to.have.length(1);
      // Each deployment got its own key and its own upstream model name.
      expect(calls(east)[0].headers.authorization).to.equal('Bearer key-east');
      expect(calls(east)[0].json.model).to.equal('mini-east');
      expect(calls(west)[0].headers.authorization).to.equal('Bearer key-west');
      expect(calls(west)[0].json.model).to.equal('mini-west');

      // The other registry (another process) sees the cool-down: nothing more reaches east.
      for (let i = 0; i < 4; i++) expect((await chat(i % 2 ? a : b)).deployment).to.equal(names.west);
      expect(calls(east)).to.have.length(1);
      expect(calls(west)).to.have.length(5);
    });
  }

  it('comes back to a deployment once its cool-down is over', async () => {
    const { file, names } = deploymentsFile({ eastWeight: 1000, westWeight: 1, cooldownSeconds: 1 });
    const providers = registry(file, new PostgresDeploymentState(db));
    east.sequence('POST /v1/chat/completions', [{ status: 500, json: serverError }, { json: completion }]);
    answers(west, { json: completion });
    expect((await chat(providers)).deployment).to.equal(names.west);
    expect((await chat(providers)).deployment).to.equal(names.west);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await chat(providers)).deployment).to.equal(names.east);
    expect(calls(east)).to.have.length(2);
    expect(calls(west)).to.have.length(2);
  });

  it('fails with a fall-back-able error once every deployment is cooling down', async () => {
    const { file } = deploymentsFile();
    const providers = registry(file, await redisState());
    answers(east, { status: 429, json: rateLimit });
    answers(west, { status: 503, json: serverError });
    // Both were tried: the last one's own failure.
    const first = await chat(providers).catch((err: unknown) => err);
    expect(first).to.be.instanceOf(UpstreamError);
    expect((first as UpstreamError).fallsBack).to.equal(true);
    expect(calls(east).length + calls(west).length).to.equal(2);
    // Then nothing is called: every deployment is cooling down, and the error says for how long.
    const next = await chat(providers).catch((err: unknown) => err) as UpstreamError;
    expect(next).to.be.instanceOf(UpstreamError);
    expect(next.kind).to.equal('rate_limited');
    expect(next.code).to.equal('deployments_unavailable');
    expect(next.fallsBack).to.equal(true);
    expect(next.retryAfterMs).to.be.within(50_000, 60_000);
    expect(calls(east).length + calls(west).length).to.equal(2);
  });

  it('skips a deployment over its requests per minute', async () => {
    const { file, names } = deploymentsFile({ eastWeight: 1000, westWeight: 1, eastRpm: 2 });
    await clearOfMinuteEnd();
    const providers = registry(file, await redisState());
    answers(east, { json: completion });
    answers(west, { json: completion });
    const served = [];
    for (let i = 0; i < 4; i++) served.push((await chat(providers)).deployment);
    expect(served).to.deep.equal([names.east, names.east, names.west, names.west]);
    expect(calls(east)).to.have.length(2);
    expect(calls(west)).to.have.length(2);
  });

  it('skips a deployment that used its tokens of the minute', async () => {
    // One answer uses 29 tokens (the fixture's usage): with 40 a minute, east takes two calls, then west serves.
    const { file, names } = deploymentsFile({ eastWeight: 1000, westWeight: 1, eastTpm: 40 });
    await clearOfMinuteEnd();
    const providers = registry(file, await redisState());
    answers(east, { json: completion });
    answers(west, { json: completion });
    const served = [];
    for (let i = 0; i < 3; i++) {
      served.push((await chat(providers)).deployment);
      await new Promise((r) => setTimeout(r, 50)); // the count is added after the answer, without holding it up
    }
    expect(completion.usage.total_tokens).to.equal(29);
    expect(served).to.deep.equal([names.east, names.east, names.west]);
  });

  it('splits traffic by weight (3:1, roughly)', async () => {
    const { file } = deploymentsFile({ eastWeight: 3, westWeight: 1 });
    const providers = registry(file, await redisState());
    answers(east, { json: completion });
    answers(west, { json: completion });
    const total = 400;
    for (let i = 0; i < total; i += 20) await Promise.all(Array.from({ length: 20 }, () => chat(providers)));
    const share = calls(east).length / total;
    expect(calls(east).length + calls(west).length).to.equal(total);
    // 300 expected; 6 standard deviations of a binomial(400, 0.75) is ±52.
    expect(share).to.be.within(0.62, 0.88);
  });

  it('sends least-busy traffic to the deployment with fewer calls in flight', async () => {
    const { file, names } = deploymentsFile({ routing: 'least-busy', eastWeight: 1000, westWeight: 1 });
    const providers = registry(file, await redisState());
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    east.on('POST /v1/chat/completions', async () => { await held; return { json: completion }; });
    answers(west, { json: completion });
    const slow = chat(providers);
    await waitFor(() => calls(east).length === 1);
    // East has a call in flight: the next goes to west although east weighs more.
    expect((await chat(providers)).deployment).to.equal(names.west);
    release();
    expect((await slow).deployment).to.equal(names.east);
  });

  it('routes a stream: a deployment throttled before its first byte hands the stream to the other', async () => {
    const { file, names } = deploymentsFile({ eastWeight: 1000, westWeight: 1 });
    const providers = registry(file, await redisState());
    answers(east, { status: 429, json: rateLimit });
    answers(west, { sse: streamText });
    const served: ServedBy = { deployment: null };
    let text = '';
    for await (const part of modelAdapter({ providers, served }, record, 'chat').doStream(hi, ctx) as AsyncIterable<ChatStreamPart>) {
      if (part.type === 'text-delta') text += part.delta;
    }
    expect(text).to.equal('Hello there!');
    expect(served.deployment).to.equal(names.west);
    expect(calls(east)).to.have.length(1);
    expect(calls(west)[0].json.stream).to.equal(true);
  });

  it('leaves a model without deployments, and every model without the file, on its one provider', async () => {
    const { file } = deploymentsFile();
    const withFile = registry(file);
    expect(withFile.deploymentsOf('gpt-4o')).to.equal(null);
    const plain = providersFromEnv({ OPENAI_API_KEY: 'key-default', OPENAI_BASE_URL: `${east.url}/v1` });
    expect(plain.deployments).to.equal(null);
    answers(east, { json: completion });
    const served: ServedBy = { deployment: null };
    await modelAdapter({ providers: plain, served }, record, 'chat').doGenerate(hi, ctx);
    expect(served.deployment).to.equal(null);
    expect(calls(east)[0].headers.authorization).to.equal('Bearer key-default');
    expect(calls(east)[0].json.model).to.equal('gpt-4o-mini');
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Waits out the last 3 s of a minute: the per-minute counts of a test start over at a minute's end. */
async function clearOfMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 3_000) await new Promise((r) => setTimeout(r, left + 50));
}
