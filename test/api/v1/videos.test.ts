import { expect } from 'chai';
import sharp from 'sharp';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { setFallbackChain } from '../../../domain/workspaces';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { expectPlayableMp4, postVideo, waitForJob, type VideoJobObject } from '../../support/video-jobs';

async function pngBytes(): Promise<Buffer> {
  return sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 60 } } }).png().toBuffer();
}

async function errorOf(res: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
  return body.error;
}

describe('/v1/videos/generations', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ providerOverrides: { simulated: { headers: { 'x-sim-video-ms': '2500' } } } });
  });
  after(() => gateway?.stop());

  it('runs a simulated job to a playable MP4 at a signed URL in our bucket, charged once', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'a red kite over the sea', duration: 2, resolution: '360p' });
    expect(res.status).to.equal(200);
    const queued = (await res.json()) as VideoJobObject;
    expect(queued.id).to.match(/^vgen_/);
    expect(queued).to.include({ object: 'video.generation', status: 'queued', progress: 0, model: 'sim-video', job_id: queued.id, created_at: queued.created });
    expect(queued.created).to.be.within(Math.floor(Date.now() / 1000) - 60, Math.floor(Date.now() / 1000) + 5);

    const { job, seen } = await waitForJob(tenant.fetch, queued.id);
    expect(job.status).to.equal('succeeded');
    expect(job.progress).to.equal(100);
    expect(seen.some((s) => s.status === 'processing')).to.equal(true);
    const progress = seen.map((s) => s.progress);
    expect(progress).to.deep.equal([...progress].sort((a, b) => a - b));
    expect(progress.every((p) => p >= 0 && p <= 100)).to.equal(true);

    // Our bucket, not the provider's: the signed URL points at MinIO and lasts a day.
    const { s3 } = await import('../../support/stack').then((m) => m.getSharedStack());
    expect(job.url!.startsWith(`${s3.endpoint}/${s3.bucket}/videos/${tenant.workspaceId}/${job.id}/`)).to.equal(true);
    expect(job.expires_at! - Math.floor(Date.now() / 1000)).to.be.within(86_300, 86_400);
    expect(job.data).to.equal(undefined);
    await expectPlayableMp4(job.url!);

    // 2 s at 360p, 0.5 credit a second: 1 credit, settled once.
    expect(job.credits_used).to.equal(1);
    const db = gateway.runtime.db;
    const rows = await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' }).orderBy('id');
    expect(rows.map((r) => `${r.kind}:${r.amount_micro}`)).to.deep.equal(['reserve:-1000000', 'release:1000000', 'settle:-1000000']);
    expect((await getBalance(db, tenant.workspaceId)).totalMicro).to.equal(99_000_000);
    const sums = await ledgerSum(db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
    const usage = await db('usage_records').where({ request_id: job.id }).first();
    expect(usage).to.include({ endpoint: 'videos.generations', status: 'succeeded', model_used: 'sim-video', credits_micro: 1_000_000 });

    const again = await tenant.fetch(`/v1/videos/generations/${job.id}`);
    expect(again.headers.get('x-credits-used')).to.equal('1');
    expect(again.headers.get('x-model-used')).to.equal('sim-video');
  });

  it('accepts duration_seconds and returns every video in data when n > 1', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    // The model's defaults otherwise: 480p, 16:9 (each video over a megabyte).
    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'two takes', duration_seconds: 4, n: 2 });
    expect(res.status).to.equal(200);
    const { job } = await waitForJob(tenant.fetch, ((await res.json()) as VideoJobObject).id);
    expect(job.status).to.equal('succeeded');
    expect(job.data).to.have.length(2);
    expect(job.url).to.equal(job.data![0].url);
    const [a, b] = await Promise.all(job.data!.map((d) => expectPlayableMp4(d.url)));
    expect(a.equals(b)).to.equal(false);
    expect(a.length).to.be.greaterThan(1024 * 1024);
    // 4 s at 480p, 1 credit a second, two videos.
    expect(job.credits_used).to.equal(8);
  });

  it('takes a reference image as base64 or a data URL (image-to-video)', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const png = await pngBytes();
    for (const image of [{ image_base64: png.toString('base64') }, { image_url: `data:image/png;base64,${png.toString('base64')}` }]) {
      const res = await postVideo(tenant, { model: 'sim-video', prompt: 'animate this', duration: 2, resolution: '360p', ...image });
      expect(res.status).to.equal(200);
      const { job } = await waitForJob(tenant.fetch, ((await res.json()) as VideoJobObject).id);
      expect(job.status).to.equal('succeeded');
      await expectPlayableMp4(job.url!);
      const stored = await gateway.runtime.storage.getBuffer(`videos/${tenant.workspaceId}/${job.id}/reference`);
      expect(stored.equals(png)).to.equal(true);
    }
  });

  it('fails a job the provider fails, with the error and the reservation refunded', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const res = await postVideo(tenant, { model: 'sim-video-fail', prompt: 'doomed', duration: 4 });
    const { job } = await waitForJob(tenant.fetch, ((await res.json()) as VideoJobObject).id);
    expect(job.status).to.equal('failed');
    expect(job.error!.code).to.equal('video_generation_failed');
    expect(job.error!.message).to.be.a('string').and.not.empty;
    expect(job.url).to.equal(undefined);
    const db = gateway.runtime.db;
    const rows = await db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' }).orderBy('id');
    expect(rows.map((r) => `${r.kind}:${r.amount_micro}`)).to.deep.equal(['reserve:-4000000', 'refund:4000000']);
    expect((await getBalance(db, tenant.workspaceId)).totalMicro).to.equal(100_000_000);
    expect(await db('usage_records').where({ request_id: job.id }).first()).to.include({ status: 'failed', credits_micro: 0, error_code: 'video_generation_failed' });
  });

  it('falls back along the chain when submission keeps failing', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    await setFallbackChain(gateway.runtime.db, { workspaceId: tenant.workspaceId, sourceModel: 'sim-video-fail', chain: ['sim-video'], actor: 'test', modalityOf: async () => 'video' });
    const res = await postVideo(tenant, { model: 'sim-video-fail', prompt: 'fallback please', duration: 2, resolution: '360p' }, { 'x-simulate-failure': '503' });
    const { job } = await waitForJob(tenant.fetch, ((await res.json()) as VideoJobObject).id);
    expect(job).to.include({ status: 'succeeded', model: 'sim-video-fail', model_used: 'sim-video', credits_used: 1 });
    await expectPlayableMp4(job.url!);
    const final = await tenant.fetch(`/v1/videos/generations/${job.id}`);
    expect(final.headers.get('x-fallback-from')).to.equal('sim-video-fail');
    const rows = await gateway.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' }).orderBy('id');
    expect(rows.map((r) => `${r.reservation_id}:${r.kind}`)).to.deep.equal([
      `${job.id}:0:reserve`, `${job.id}:0:refund`, `${job.id}:1:reserve`, `${job.id}:1:release`, `${job.id}:1:settle`,
    ]);
  });

  it('validates the parameters per model from the catalog', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const cases: Array<[Record<string, unknown>, number, string | null, string]> = [
      [{ model: 'sim-video', prompt: 'x', duration: 3 }, 400, 'duration', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', duration_seconds: 3 }, 400, 'duration_seconds', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', duration: 2, duration_seconds: 4 }, 400, 'duration_seconds', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', resolution: '1080p' }, 400, 'resolution', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', aspect_ratio: '4:3' }, 400, 'aspect_ratio', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', n: 3 }, 400, 'n', 'invalid_value'],
      [{ model: 'sim-video', prompt: 'x', person_generation: 'everyone' }, 400, 'person_generation', 'invalid_value'],
      [{ model: 'ray-2', prompt: 'x', person_generation: 'allow_all' }, 400, 'person_generation', 'unsupported_parameter'],
      [{ model: 'ray-2', prompt: 'x', image_base64: 'AAAA' }, 400, 'image_base64', 'unsupported_parameter'],
      [{ model: 'sim-video', prompt: 'x', fps: 30 }, 400, 'fps', 'unknown_parameter'],
      [{ model: 'sim-video' }, 400, 'prompt', 'missing_required_parameter'],
      [{ model: 'no-such-video', prompt: 'x' }, 404, 'model', 'model_not_found'],
      [{ model: 'sim-chat', prompt: 'x' }, 400, 'model', 'model_modality_mismatch'],
    ];
    for (const [body, status, param, code] of cases) {
      const res = await postVideo(tenant, body);
      expect(res.status, JSON.stringify(body)).to.equal(status);
      expect(await errorOf(res), JSON.stringify(body)).to.include({ param, code });
    }
    expect(await gateway.runtime.db('video_jobs').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
  });

  it('refuses image_url on loopback, private, link-local and unspecified addresses (SSRF)', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const urls = [
      'http://127.0.0.1/cat.png', 'http://127.1.2.3:8080/cat.png', 'http://10.0.0.5/cat.png', 'http://192.168.1.1/cat.png', 'http://172.16.0.1/cat.png',
      'http://169.254.169.254/latest/meta-data/', 'http://[::1]/cat.png', 'http://[::ffff:127.0.0.1]/cat.png', 'http://[fe80::1]/cat.png',
      'http://0.0.0.0/cat.png', 'http://[::]/cat.png', 'http://localhost/cat.png', 'http://224.0.0.1/cat.png',
    ];
    for (const url of urls) {
      const res = await postVideo(tenant, { model: 'sim-video', prompt: 'x', image_url: url });
      expect(res.status, url).to.equal(400);
      expect(await errorOf(res), url).to.include({ param: 'image_url', code: 'image_url_forbidden', type: 'invalid_request_error' });
    }
    for (const url of ['file:///etc/passwd', 'ftp://example.com/a.png', 'http://user:pw@example.com/a.png', 'not a url']) {
      const res = await postVideo(tenant, { model: 'sim-video', prompt: 'x', image_url: url });
      expect(res.status, url).to.equal(400);
      expect(await errorOf(res), url).to.include({ param: 'image_url', code: 'invalid_image_url' });
    }
    for (const [image, code] of [['not base64!!', 'invalid_image'], [Buffer.from('plain text, not an image').toString('base64'), 'invalid_image']]) {
      const res = await postVideo(tenant, { model: 'sim-video', prompt: 'x', image_base64: image });
      expect(res.status).to.equal(400);
      expect(await errorOf(res)).to.include({ param: 'image_base64', code });
    }
    // Nothing was created or held.
    expect(await gateway.runtime.db('video_jobs').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
    expect(await gateway.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' })).to.deep.equal([]);
  });

  it('refuses a job the balance cannot cover with 402, holding nothing', async () => {
    const tenant = await gateway.newTenant({ credits: 1 });
    const res = await postVideo(tenant, { model: 'sim-video', prompt: 'too dear', duration: 8, resolution: '720p' });
    expect(res.status).to.equal(402);
    expect((await errorOf(res)).code).to.equal('insufficient_credits');
    expect(await gateway.runtime.db('video_jobs').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);
  });

  it("shows another workspace's job as missing", async () => {
    const owner = await gateway.newTenant({ credits: 100 });
    const other = await gateway.newTenant({ credits: 100 });
    const res = await postVideo(owner, { model: 'sim-video', prompt: 'mine', duration: 2, resolution: '360p' });
    const { id } = (await res.json()) as VideoJobObject;
    const theirs = await other.fetch(`/v1/videos/generations/${id}`);
    const none = await other.fetch('/v1/videos/generations/vgen_000000000000000000000000');
    expect(theirs.status).to.equal(404);
    expect(none.status).to.equal(404);
    const a = await errorOf(theirs);
    const b = await errorOf(none);
    expect({ ...a, message: a.message.replace(id, 'ID') }).to.deep.equal({ ...b, message: b.message.replace('vgen_000000000000000000000000', 'ID') });
    await waitForJob(owner.fetch, id);
  });

  it('replays an Idempotency-Key: one job, one charge; another body with the key is 422', async () => {
    const tenant = await gateway.newTenant({ credits: 100 });
    const body = { model: 'sim-video', prompt: 'once only', duration: 2, resolution: '360p' };
    const headers = { 'Idempotency-Key': 'video-1' };
    const [first, second] = await Promise.all([postVideo(tenant, body, headers), postVideo(tenant, body, headers)]);
    expect([first.status, second.status]).to.deep.equal([200, 200]);
    const a = (await first.json()) as VideoJobObject;
    const b = (await second.json()) as VideoJobObject;
    expect(b.id).to.equal(a.id);
    const { job } = await waitForJob(tenant.fetch, a.id);
    const replay = await postVideo(tenant, { ...body }, headers);
    expect(replay.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(((await replay.json()) as VideoJobObject)).to.include({ id: job.id, status: 'succeeded' });
    const conflict = await postVideo(tenant, { ...body, prompt: 'something else' }, headers);
    expect(conflict.status).to.equal(422);
    expect((await errorOf(conflict)).code).to.equal('idempotency_key_reused');
    const db = gateway.runtime.db;
    expect(await db('video_jobs').where({ workspace_id: tenant.workspaceId }).count<Array<{ count: number }>>()).to.deep.equal([{ count: 1 }]);
    expect(await db('credit_ledger').where({ workspace_id: tenant.workspaceId, kind: 'settle' }).count<Array<{ count: number }>>()).to.deep.equal([{ count: 1 }]);
  });
});
