import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { checkDeployedModels } from '../../../domain/deployment-state';
import { ModelCatalog } from '../../../domain/model-catalog';
import { receiptsFor } from '../../../domain/playground-receipts';
import { providersFromEnv } from '../../../main/providers';
import { DeploymentsFileError } from '../../../providers/deployments';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { redisCountersEnv, deleteRedisKeys } from '../../support/redis';
import completion from '../../providers/openai-compatible/fixtures/chat-completion.json';
import streamText from '../../providers/openai-compatible/fixtures/chat-stream-text.json';
import rateLimit from '../../providers/openai-compatible/fixtures/error-rate-limit.json';

/**
 * A model served by two deployments (two fake OpenAI-compatible hosts) through the whole gateway: one
 * deployment throttled, the other keeps serving; the usage records, `GET /v1/requests/{id}` and the
 * Playground receipt name the deployment that served; `GET /v1/models` still lists the model once.
 */
describe('a model with two deployments, one throttled', function () {
  this.timeout(180_000);
  const east = new FakeUpstream();
  const west = new FakeUpstream();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deployments-e2e-'));
  const tag = randomBytes(3).toString('hex');
  const names = { east: `e2e-east-${tag}`, west: `e2e-west-${tag}` };
  const redisEnv = redisCountersEnv();
  let gateway: TestGateway;
  let tenant: Tenant;
  const hi = [{ role: 'user' as const, content: 'Hi' }];

  before(async function () {
    this.timeout(240_000);
    await Promise.all([east.start(), west.start()]);
    const file = path.join(dir, 'deployments.yaml');
    fs.writeFileSync(file, [
      'providers:',
      '  openai-east:',
      '    host: openai',
      `    baseUrl: ${east.url}/v1`,
      '    credentials: { apiKey: E2E_EAST_KEY }',
      '  openai-west:',
      '    host: openai',
      `    baseUrl: ${west.url}/v1`,
      '    credentials: { apiKey: E2E_WEST_KEY }',
      'models:',
      '  gpt-4o-mini:',
      '    cooldownSeconds: 120',
      '    deployments:',
      // East first by weight, so the first request meets its 429.
      `      - { name: ${names.east}, provider: openai-east, model: mini-east, weight: 1000 }`,
      `      - { name: ${names.west}, provider: openai-west, model: mini-west, weight: 1 }`,
    ].join('\n'));
    gateway = await startTestGateway({
      env: {
        ...redisEnv, GATEWAY_DEPLOYMENTS_FILE: file, E2E_EAST_KEY: 'key-east', E2E_WEST_KEY: 'key-west',
        // A model outside the file keeps its one provider from the environment.
        OPENAI_API_KEY: 'key-default', OPENAI_BASE_URL: `${west.url}/default/v1`,
      },
    });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(async () => {
    await gateway?.stop();
    await Promise.all([east.stop(), west.stop()]);
    await deleteRedisKeys(redisEnv.REDIS_KEY_PREFIX);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const usageOf = (requestId: string) => gateway.runtime.db('usage_records').where({ request_id: requestId }).first();

  it('keeps serving from the healthy deployment, and every record names it', async () => {
    east.on('POST /v1/chat/completions', { status: 429, json: rateLimit });
    west.on('POST /v1/chat/completions', (req) => (req.json.stream ? { sse: streamText } : { json: completion }));

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { data, response } = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi }).withResponse();
      expect(data.choices[0].message.content).to.equal(completion.choices[0].message.content);
      expect(data.model).to.equal('gpt-4o-mini');
      expect(response.headers.get('x-model-used')).to.equal('gpt-4o-mini');
      expect(response.headers.get('x-fallback-depth')).to.equal(null);
      ids.push(response.headers.get('x-request-id')!);
    }
    const stream = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: hi, stream: true }).withResponse();
    let text = '';
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).to.equal('Hello there!');
    ids.push(stream.response.headers.get('x-request-id')!);

    // East was called once (its 429), then cooled down: everything else went to west.
    expect(east.received('POST /v1/chat/completions')).to.have.length(1);
    expect(west.received('POST /v1/chat/completions')).to.have.length(5);
    expect(east.received('POST /v1/chat/completions')[0].headers.authorization).to.equal('Bearer key-east');
    expect(west.received('POST /v1/chat/completions').map((r) => [r.headers.authorization, r.json.model]))
      .to.deep.equal(Array.from({ length: 5 }, () => ['Bearer key-west', 'mini-west']));

    for (const id of ids) {
      const usage = await usageOf(id);
      expect({ deployment: usage.deployment, model: usage.model_used, status: usage.status }).to.deep.equal({ deployment: names.west, model: 'gpt-4o-mini', status: 'succeeded' });
    }
    const receipt = await (await tenant.fetch(`/v1/requests/${ids[0]}`)).json() as Record<string, unknown>;
    expect(receipt).to.include({ status: 'succeeded', model_used: 'gpt-4o-mini', deployment: names.west, fallback_depth: 0 });
    const playground = await receiptsFor(gateway.runtime.db, tenant.workspaceId, [ids[4]]);
    expect(playground.get(ids[4])).to.include({ modelUsed: 'gpt-4o-mini', deployment: names.west });
  });

  it('leaves models outside the file on their one provider, with no deployment recorded', async () => {
    west.on('POST /default/v1/chat/completions', { json: completion });
    const { response } = await tenant.client.chat.completions.create({ model: 'gpt-4o', messages: hi }).withResponse();
    const sent = west.received('POST /default/v1/chat/completions');
    expect(sent.map((r) => [r.headers.authorization, r.json.model])).to.deep.equal([['Bearer key-default', 'gpt-4o']]);
    expect((await usageOf(response.headers.get('x-request-id')!)).deployment).to.equal(null);
    const receipt = await (await tenant.fetch(`/v1/requests/${response.headers.get('x-request-id')}`)).json() as Record<string, unknown>;
    expect(receipt.deployment).to.equal(null);
  });

  it('lists the model once in GET /v1/models', async () => {
    const models = await tenant.client.models.list();
    expect(models.data.filter((m) => m.id === 'gpt-4o-mini')).to.have.length(1);
  });

  it('stops the boot on a model the catalog does not have, naming its line', async () => {
    const file = path.join(dir, 'typo.yaml');
    const catalog = new ModelCatalog(gateway.runtime.db);
    const check = (text: string) => {
      fs.writeFileSync(file, text);
      return checkDeployedModels(providersFromEnv({ GATEWAY_DEPLOYMENTS_FILE: file, OPENAI_API_KEY: 'k' }).deployments!, catalog).then(() => null, (err: unknown) => err);
    };
    const typo = await check('models:\n  gpt-4o:\n    deployments: [{ name: a, provider: openai }]\n  gpt-4o-mimi:\n    deployments: [{ name: b, provider: openai }]\n');
    expect(typo).to.be.instanceOf(DeploymentsFileError);
    expect((typo as Error).message).to.equal(`${file}:4: 'gpt-4o-mimi' is not a model of the catalog`);
    const alias = await check('models:\n  claude-opus-4-5-20251101:\n    deployments: [{ name: c, provider: openai }]\n');
    expect((alias as Error).message).to.equal(`${file}:2: 'claude-opus-4-5-20251101' is an alias: name the model 'claude-opus-4-5'`);
    const video = await check('models:\n  veo-3.1-generate-preview:\n    deployments: [{ name: v, provider: openai }]\n');
    expect((video as Error).message).to.match(new RegExp(`^${file}:2: 'veo-3.1-generate-preview' is a video model`));
    expect(await check('models:\n  gpt-4o:\n    deployments: [{ name: a, provider: openai }]\n')).to.equal(null);
  });
});
