import { expect } from 'chai';
import OpenAI from 'openai';
import { loadCatalogFiles } from '../../../catalog/load';
import type { ModelRecord, ParamRule } from '../../../catalog/types';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { setFallbackChain } from '../../../domain/workspaces';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { bytesOf, isJpeg, isPng, isWebp, ledgerKinds, withoutProviderKeys } from '../../support/media';

/** Every parameter the spec's image table names (besides model, prompt, stream and user). */
const SPEC_IMAGE_PARAMS: Record<string, unknown> = {
  n: 1, size: '1024x1024', quality: 'standard', style: 'vivid', response_format: 'url', aspect_ratio: '1:1', image_size: '1K',
  person_generation: 'allow_adult', background: 'auto', output_format: 'png', output_compression: 50, input_fidelity: 'low',
  moderation: 'auto', negative_prompt: 'blur', seed: 7,
};

/** A value the rule accepts (lists: the first; ranges: the minimum). */
function validValue(rule: ParamRule): unknown {
  if (Array.isArray(rule)) return rule[0];
  if (rule.values) return rule.values[0];
  if (rule.type === 'boolean') return true;
  if (rule.type === 'string') return 'a detail';
  if (rule.type === 'integer' || rule.type === 'number') return rule.min ?? 1;
  return 'x';
}

/** A request setting every parameter the record allows, each to a valid value (and `requires` satisfied). */
function everyAllowedParam(record: ModelRecord): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(record.allowedParams)) request[name === 'supported_sizes' ? 'size' : name] = validValue(rule);
  for (const rule of Object.values(record.allowedParams)) {
    if (!Array.isArray(rule) && rule.requires) for (const [other, accepted] of Object.entries(rule.requires)) request[other] = accepted[accepted.length - 1];
  }
  delete request.partial_images; // only meaningful with stream
  return request;
}

const imageModels = loadCatalogFiles().filter((r) => r.modality === 'image');
/** One model per family (the family's parameter set is identical across its models). */
const families = [...imageModels.reduce((byFamily, r) => (byFamily.has(r.family ?? r.slug) ? byFamily : byFamily.set(r.family ?? r.slug, r)), new Map<string, ModelRecord>()).values()];

describe('POST /v1/images/generations', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: withoutProviderKeys() });
    tenant = await gateway.newTenant({ credits: 1000 });
  });
  after(() => gateway?.stop());

  it('answers a signed URL to the PNG in our bucket, with credits and headers', async () => {
    const { data, response } = await tenant.client.images.generate({ model: 'sim-image', prompt: 'a lighthouse at dusk', size: '256x256' }).withResponse();
    expect(data.created).to.be.a('number');
    expect(data.data).to.have.length(1);
    const image = data.data![0];
    expect(image.b64_json).to.equal(undefined);
    expect(image.revised_prompt).to.be.a('string').and.include('a lighthouse at dusk');
    expect(image.url).to.match(/X-Amz-Expires=3600/);
    const requestId = response.headers.get('x-request-id')!;
    expect(new URL(image.url!).pathname).to.include(`/results/${requestId}/image-0.png`);
    const fetched = await fetch(image.url!);
    expect(fetched.status).to.equal(200);
    expect(fetched.headers.get('content-type')).to.equal('image/png');
    const png = await bytesOf(fetched);
    expect(isPng(png)).to.equal(true);
    expect(png.readUInt32BE(16)).to.equal(256); // IHDR width
    expect(response.headers.get('x-model-used')).to.equal('sim-image');
    expect(response.headers.get('x-credits-used')).to.equal('1');
    expect((data as unknown as { credits_used: number }).credits_used).to.equal(1);
  });

  it('answers b64_json inline in the requested output format', async () => {
    const jpeg = await tenant.client.images.generate({ model: 'sim-image', prompt: 'a red door', size: '512x512', response_format: 'b64_json', output_format: 'jpeg', output_compression: 60 });
    const bytes = Buffer.from(jpeg.data![0].b64_json!, 'base64');
    expect(isJpeg(bytes)).to.equal(true);
    expect(jpeg.data![0].url).to.equal(undefined);
    const webp = await tenant.client.images.generate({ model: 'sim-image', prompt: 'a red door', size: '256x256', response_format: 'b64_json', output_format: 'webp' });
    expect(isWebp(Buffer.from(webp.data![0].b64_json!, 'base64'))).to.equal(true);
  });

  it('charges n images at the requested quality', async () => {
    const before = (await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro;
    const { data, response } = await tenant.client.images.generate({ model: 'sim-image', prompt: 'three moons', n: 3, size: '256x256', quality: 'hd' }).withResponse();
    expect(data.data).to.have.length(3);
    expect(new Set(data.data!.map((d) => d.url)).size).to.equal(3);
    expect(response.headers.get('x-credits-used')).to.equal('6'); // hd: 2 credits an image
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(before - 6_000_000);
    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  describe('validation against the catalog, family by family', () => {
    for (const record of families) {
      const allowed = new Set(Object.keys(record.allowedParams).map((p) => (p === 'supported_sizes' ? 'size' : p)));

      it(`${record.family}: every parameter it allows passes validation (${record.slug})`, async () => {
        const res = await tenant.fetch('/v1/images/generations', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: record.slug, prompt: 'validation probe', ...everyAllowedParam(record) }),
        });
        const body = (await res.json()) as { error?: { code: string } };
        // Simulated models answer; real providers are unconfigured here, so validation passed and the call was refused upstream.
        if (record.provider === 'simulated') expect(res.status, JSON.stringify(body)).to.equal(200);
        else expect([res.status, body.error?.code], JSON.stringify(body)).to.deep.equal([503, 'provider_not_configured']);
      });

      it(`${record.family}: each spec parameter it does not take is refused by name`, async () => {
        // A harmless client default the model lists in ignoredParams is accepted (docs/endpoints-media.md).
        const harmless = (p: string) => record.ignoredParams?.[p]?.includes(SPEC_IMAGE_PARAMS[p] as string) ?? false;
        const refused = Object.keys(SPEC_IMAGE_PARAMS).filter((p) => !allowed.has(p) && !harmless(p));
        for (const param of refused) {
          const res = await tenant.fetch('/v1/images/generations', {
            method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: record.slug, prompt: 'p', [param]: SPEC_IMAGE_PARAMS[param] }),
          });
          expect(res.status, param).to.equal(400);
          const { error } = (await res.json()) as { error: { param: string; message: string; type: string; code: string } };
          expect(error.param, param).to.equal(param);
          expect(error.type).to.equal('invalid_request_error');
          expect(error.code).to.equal('unsupported_parameter');
          // The message lists what the model does take.
          for (const ok of allowed) expect(error.message).to.include(ok);
        }
      });

      it(`${record.family}: n above its maximum and an unsupported size are refused`, async () => {
        const nRule = record.allowedParams.n as { max: number };
        const tooMany = await tenant.fetch('/v1/images/generations', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: record.slug, prompt: 'p', n: nRule.max + 1 }),
        });
        expect(tooMany.status).to.equal(400);
        expect(((await tooMany.json()) as { error: { param: string } }).error.param).to.equal('n');
        const badSize = await tenant.fetch('/v1/images/generations', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: record.slug, prompt: 'p', size: '123x456' }),
        });
        expect(badSize.status).to.equal(400);
        const { error } = (await badSize.json()) as { error: { param: string; message: string } };
        expect(error.param).to.equal('size');
        expect(error.message).to.include((record.allowedParams.supported_sizes as string[])[0]);
      });
    }
  });

  it('refuses a request without a prompt, or for a model of another modality', async () => {
    const noPrompt = await tenant.fetch('/v1/images/generations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-image' }) });
    expect(noPrompt.status).to.equal(400);
    expect(((await noPrompt.json()) as { error: { param: string } }).error.param).to.equal('prompt');
    try {
      await tenant.client.images.generate({ model: 'sim-chat', prompt: 'x' });
      expect.fail('should be refused');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('model_modality_mismatch');
    }
  });

  it('falls back along the workspace chain (sim-image-fail-500 -> sim-image)', async () => {
    const t = await gateway.newTenant({ credits: 10 });
    await setFallbackChain(gateway.runtime.db, { workspaceId: t.workspaceId, sourceModel: 'sim-image-fail-500', chain: ['sim-image'], actor: 'test', modalityOf: async () => 'image' });
    const { data, response } = await t.client.images.generate({ model: 'sim-image-fail-500', prompt: 'fallback please', size: '256x256' }).withResponse();
    expect(data.data![0].url).to.be.a('string');
    expect(response.headers.get('x-model-used')).to.equal('sim-image');
    expect(response.headers.get('x-fallback-from')).to.equal('sim-image-fail-500');
    expect(response.headers.get('x-fallback-depth')).to.equal('1');
    // The failed hop's hold came back; only the served image is charged.
    expect(await ledgerKinds(gateway.runtime.db, response.headers.get('x-request-id')!)).to.deep.equal(['reserve', 'refund', 'reserve', 'release', 'settle']);
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(9_000_000);
  });

  it('refunds the hold when the model fails (balance unchanged, reserve + refund rows)', async () => {
    const t = await gateway.newTenant({ credits: 10 });
    let requestId: string | null = null;
    try {
      await t.client.images.generate({ model: 'sim-image-fail-500', prompt: 'this fails', n: 2 });
      expect.fail('should fail');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(502);
      requestId = (err as InstanceType<typeof OpenAI.APIError>).requestID ?? null;
    }
    expect(requestId).to.be.a('string');
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(10_000_000);
    expect(await ledgerKinds(gateway.runtime.db, requestId!)).to.deep.equal(['reserve', 'refund']);
    const usage = await gateway.runtime.db('usage_records').where({ request_id: requestId }).first();
    expect(usage.status).to.equal('failed');
    expect(Number(usage.credits_micro)).to.equal(0);
  });

  it('refuses with 402 before any model call when the balance cannot cover n images', async () => {
    const t = await gateway.newTenant({ credits: 1 });
    try {
      await t.client.images.generate({ model: 'sim-image', prompt: 'too expensive', n: 2 });
      expect.fail('should be refused');
    } catch (err) {
      expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('insufficient_credits');
    }
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(1_000_000);
  });

  describe('stream: true', () => {
    it('streams the image and its charge as OpenAI\'s completed event, through the official client', async () => {
      const stream = await tenant.client.images.generate({ model: 'sim-image', prompt: 'a streamed kite', size: '256x256', stream: true });
      const events: Array<Record<string, any>> = [];
      for await (const event of stream) events.push(event as unknown as Record<string, any>);
      expect(events.map((e) => e.type)).to.deep.equal(['image_generation.completed']);
      const last = events[events.length - 1];
      expect(last).to.include({ index: 0, model: 'sim-image', credits_used: 1, size: '256x256', output_format: 'png', quality: 'auto', background: 'auto' });
      expect(isPng(await bytesOf(await fetch(last.url)))).to.equal(true);
    });

    it('sends event-stream bytes with named events, keeps reporting (as comments) while the model works, and ends with [DONE]', async () => {
      const res = await tenant.fetch('/v1/images/generations', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-simulate-failure': 'slow', 'x-simulate-delay-ms': '4500' },
        body: JSON.stringify({ model: 'sim-image', prompt: 'slow one', size: '256x256', response_format: 'b64_json', stream: true }),
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(res.headers.get('x-request-id')).to.be.a('string');
      const text = await res.text();
      const blocks = text.trim().split('\n\n');
      const progress = blocks.filter((b) => b.startsWith(': image_generation in_progress model=sim-image attempt=1 '));
      expect(progress.length).to.be.greaterThanOrEqual(2);
      expect(blocks.filter((b) => b.startsWith('event: ')).map((b) => b.split('\n')[0])).to.deep.equal(['event: image_generation.completed']);
      const completed = blocks.find((b) => b.startsWith('event: image_generation.completed\n'))!;
      const event = JSON.parse(completed.split('\ndata: ')[1]);
      expect(isPng(Buffer.from(event.b64_json, 'base64'))).to.equal(true);
      expect(blocks[blocks.length - 1]).to.equal('data: [DONE]');
    });

    it('shows a fallback in its progress comments and final event', async () => {
      const t = await gateway.newTenant({ credits: 10 });
      await setFallbackChain(gateway.runtime.db, { workspaceId: t.workspaceId, sourceModel: 'sim-image-fail-500', chain: ['sim-image'], actor: 'test', modalityOf: async () => 'image' });
      const res = await t.fetch('/v1/images/generations', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-image-fail-500', prompt: 'fall back while streaming', size: '256x256', stream: true }),
      });
      const blocks = (await res.text()).trim().split('\n\n');
      const models = blocks.filter((b) => b.startsWith(': image_generation in_progress')).map((b) => /model=(\S+)/.exec(b)![1]);
      expect(models[0]).to.equal('sim-image-fail-500');
      expect(models[models.length - 1]).to.equal('sim-image');
      expect(blocks.find((b) => b.includes('model=sim-image ') && b.includes('fallback_from=sim-image-fail-500 fallback_depth=1'))).to.be.a('string');
      const last = JSON.parse(blocks.find((b) => b.startsWith('event: image_generation.completed'))!.split('\ndata: ')[1]);
      expect(last).to.include({ type: 'image_generation.completed', model: 'sim-image', fallback_from: 'sim-image-fail-500', fallback_depth: 1, credits_used: 1 });
      expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(9_000_000);
    });

    it('answers ordinary JSON errors before the first byte', async () => {
      const unsupported = await tenant.fetch('/v1/images/generations', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'dall-e-3', prompt: 'p', stream: true }),
      });
      expect(unsupported.status).to.equal(400);
      expect(unsupported.headers.get('content-type')).to.match(/^application\/json/);
      expect(((await unsupported.json()) as { error: { param: string } }).error.param).to.equal('stream');
      const broke = await gateway.newTenant({ credits: 0 });
      const poor = await broke.fetch('/v1/images/generations', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-image', prompt: 'p', stream: true }),
      });
      expect(poor.status).to.equal(402);
      expect(((await poor.json()) as { error: { code: string } }).error.code).to.equal('insufficient_credits');
    });

    it('ends with an error event and refunds when every model fails after the stream began', async () => {
      const t = await gateway.newTenant({ credits: 10 });
      const stream = await t.client.images.generate({ model: 'sim-image-fail-500', prompt: 'doomed', stream: true });
      const seen: string[] = [];
      try {
        for await (const event of stream) seen.push((event as { type: string }).type);
        expect.fail('the stream should end with an error');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.APIError);
        expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('upstream_error');
      }
      expect(seen).to.deep.equal([]);
      expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(10_000_000);
    });
  });
});
