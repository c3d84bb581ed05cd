import { expect } from 'chai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { bytesOf, isMp3, isPng } from '../../support/media';
import imagenPredict from '../../providers/google/fixtures/imagen-predict.json';
import taskSubmitted from '../../providers/bfl/fixtures/task-submitted.json';
import taskPending from '../../providers/bfl/fixtures/task-pending.json';
import taskReady from '../../providers/bfl/fixtures/task-ready.json';

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(256, 7), Buffer.from([0xff, 0xd9])]);
const MP3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([0x04, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);

/**
 * The media endpoints against every other wire family the catalog's media models use, each answered by
 * a local fake of its API: Google (Imagen), Black Forest Labs (FLUX tasks), Stability (Stable Image),
 * ElevenLabs (speech) and Stability (Stable Audio).
 */
describe('media endpoints through the other providers\' adapters (fake upstreams)', function () {
  this.timeout(180_000);
  const fake = new FakeUpstream();
  let gateway: TestGateway;
  let tenant: Tenant;
  const json = (path: string, body: unknown) => tenant.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  before(async function () {
    this.timeout(180_000);
    await fake.start();
    const env: NodeJS.ProcessEnv = {};
    for (const prefix of ['GOOGLE', 'BFL', 'STABILITY', 'ELEVENLABS', 'STABILITY_AUDIO']) {
      env[`${prefix}_BASE_URL`] = fake.url;
      env[`${prefix}_API_KEY`] = `${prefix.toLowerCase()}-test`;
    }
    gateway = await startTestGateway({ env });
    tenant = await gateway.newTenant({ credits: 200 });
  });
  after(async () => {
    await gateway?.stop();
    await fake.stop();
  });
  beforeEach(() => fake.reset());

  it('Imagen: n images from one predict call, with the ratio taken from the size', async () => {
    fake.on('POST /v1beta/models/imagen-4.0-generate-001:predict', { json: imagenPredict });
    const res = await json('/v1/images/generations', { model: 'imagen-4.0-generate-001', prompt: 'a lighthouse', n: 2, size: '1408x768', person_generation: 'dont_allow' });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Array<{ url: string }>; credits_used: number };
    const [sent] = fake.received('POST /v1beta/models/imagen-4.0-generate-001:predict');
    expect(sent.headers['x-goog-api-key']).to.equal('google-test');
    expect(sent.json).to.deep.equal({ instances: [{ prompt: 'a lighthouse' }], parameters: { sampleCount: 2, aspectRatio: '16:9', personGeneration: 'dont_allow', imageSize: '1K' } });
    expect(body.data).to.have.length(2);
    for (const item of body.data) expect(isPng(await bytesOf(await fetch(item.url)))).to.equal(true);
    expect(body.credits_used).to.equal(8);
  });

  it('FLUX: submits the task, polls it, downloads the sample and serves it from our bucket', async () => {
    const local = (url: string) => { const u = new URL(url); return `${fake.url}${u.pathname}${u.search}`; };
    fake.on('POST /v1/flux-dev', { json: { ...taskSubmitted, polling_url: local(taskSubmitted.polling_url) } });
    fake.sequence('GET /v1/get_result', [{ json: taskPending }, { json: { ...taskReady, result: { ...taskReady.result, sample: local(taskReady.result.sample) } } }]);
    fake.on(`GET ${new URL(taskReady.result.sample).pathname}`, { headers: { 'content-type': 'image/jpeg' }, body: JPEG });
    const res = await json('/v1/images/generations', { model: 'flux-dev', prompt: 'a lighthouse', size: '1344x768', steps: 20, guidance: 2.5 });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Array<{ url: string }>; credits_used: number };
    const [sent] = fake.received('POST /v1/flux-dev');
    expect(sent.headers['x-key']).to.equal('bfl-test');
    expect(sent.json).to.include({ prompt: 'a lighthouse', steps: 20, guidance: 2.5, width: 1344, height: 768 });
    const image = await fetch(body.data[0].url);
    expect(image.headers.get('content-type')).to.equal('image/jpeg');
    expect((await bytesOf(image)).equals(JPEG)).to.equal(true);
    expect(body.credits_used).to.equal(2.5);
  });

  it('Stable Image: sends the multipart generate request and answers a URL to the returned image', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]);
    fake.on('POST /v2beta/stable-image/generate/core', { headers: { 'content-type': 'image/png', 'finish-reason': 'SUCCESS', seed: '7' }, body: png });
    const res = await json('/v1/images/generations', { model: 'stable-image-core', prompt: 'a lighthouse', style_preset: 'anime' });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Array<{ url: string }>; credits_used: number };
    const [sent] = fake.received('POST /v2beta/stable-image/generate/core');
    expect(sent.headers.authorization).to.equal('Bearer stability-test');
    const form = await new Response(sent.raw, { headers: { 'content-type': String(sent.headers['content-type']) } }).formData();
    expect(form.get('prompt')).to.equal('a lighthouse');
    expect(form.get('style_preset')).to.equal('anime');
    expect((await bytesOf(await fetch(body.data[0].url))).equals(png)).to.equal(true);
    expect(body.credits_used).to.equal(3);
  });

  it('ElevenLabs: speech by voice id, billed per character', async () => {
    fake.on('POST /v1/text-to-speech/*', { headers: { 'content-type': 'audio/mpeg' }, body: MP3 });
    const res = await json('/v1/audio/speech', { model: 'eleven_flash_v2_5', voice: 'aria', input: 'Hello there' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('audio/mpeg');
    expect((await bytesOf(res)).equals(MP3)).to.equal(true);
    const [sent] = fake.received('POST /v1/text-to-speech/*');
    expect(sent.headers['xi-api-key']).to.equal('elevenlabs-test');
    expect(sent.query.get('output_format')).to.equal('mp3_44100_128');
    expect(sent.json).to.include({ text: 'Hello there', model_id: 'eleven_flash_v2_5' });
    expect(res.headers.get('x-credits-used')).to.equal('0.055'); // 11 characters at 5000 credits per 1M
  });

  it('Stable Audio: a synchronous track, charged per track', async () => {
    fake.on('POST /v2beta/audio/stable-audio-2/text-to-audio', { headers: { 'content-type': 'audio/mpeg', 'finish-reason': 'SUCCESS', seed: '5' }, body: MP3 });
    const res = await json('/v1/music/generations', { model: 'stable-audio-2.5', prompt: 'lo-fi piano', duration: 20, steps: 8 });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Array<{ url: string; duration_seconds: number }>; credits_used: number };
    const [sent] = fake.received('POST /v2beta/audio/stable-audio-2/text-to-audio');
    expect(sent.headers.authorization).to.equal('Bearer stability_audio-test');
    const form = await new Response(sent.raw, { headers: { 'content-type': String(sent.headers['content-type']) } }).formData();
    expect(form.get('prompt')).to.equal('lo-fi piano');
    expect(form.get('duration')).to.equal('20');
    expect(body.data[0].duration_seconds).to.equal(20);
    expect(isMp3(await bytesOf(await fetch(body.data[0].url)))).to.equal(true);
    expect(body.credits_used).to.equal(20);
  });

  it('a provider\'s throttling falls back like chat does (FLUX 429 -> sim-image)', async () => {
    const { setFallbackChain } = await import('../../../domain/workspaces');
    const t = await gateway.newTenant({ credits: 20 });
    await setFallbackChain(gateway.runtime.db, { workspaceId: t.workspaceId, sourceModel: 'flux-pro-1.1', chain: ['sim-image'], actor: 'test', modalityOf: async () => 'image' });
    fake.on('POST /v1/flux-pro-1.1', { status: 429, headers: { 'retry-after': '30' }, json: { detail: 'Too many active tasks' } });
    const res = await t.fetch('/v1/images/generations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flux-pro-1.1', prompt: 'x' }) });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-model-used')).to.equal('sim-image');
    expect(res.headers.get('x-fallback-from')).to.equal('flux-pro-1.1');
    const body = (await res.json()) as { data: Array<{ url: string }> };
    expect(isPng(await bytesOf(await fetch(body.data[0].url)))).to.equal(true);
  });
});
