import { expect } from 'chai';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { bytesOf, isMp3, isWav, ledgerKinds, withoutProviderKeys } from '../../support/media';

interface MusicResponse {
  created: number;
  model: string;
  data: Array<{ url: string; duration_seconds: number; content_type: string }>;
  credits_used: number;
}

describe('POST /v1/music/generations', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: withoutProviderKeys() });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  const post = (t: Tenant, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.fetch('/v1/music/generations', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('answers the track synchronously as a signed URL, charged per track and per second', async () => {
    const res = await post(tenant, { model: 'sim-music', prompt: 'a calm piano loop', duration: 5 });
    expect(res.status).to.equal(200);
    const body = (await res.json()) as MusicResponse;
    expect(body.model).to.equal('sim-music');
    expect(body.data).to.have.length(1);
    expect(body.data[0].duration_seconds).to.be.closeTo(5, 0.05);
    expect(body.data[0].url).to.match(/X-Amz-Expires=3600/);
    const track = await fetch(body.data[0].url);
    expect(track.headers.get('content-type')).to.equal('audio/mpeg');
    expect(isMp3(await bytesOf(track))).to.equal(true);
    // 1 credit a track + 0.02 a second, billed to the millisecond of the produced track.
    const expected = 1 + Math.ceil(Math.round(body.data[0].duration_seconds * 1000) * 20) / 1e6;
    expect(body.credits_used).to.equal(expected);
    expect(Number(res.headers.get('x-credits-used'))).to.equal(expected);
  });

  it('takes the model parameters from the catalog (wav, seed, instrumental)', async () => {
    const res = await post(tenant, { model: 'sim-music', prompt: 'drums', duration: 6, response_format: 'wav', seed: 42, instrumental: true });
    const body = (await res.json()) as MusicResponse;
    expect(body.data[0].content_type).to.equal('audio/wav');
    expect(isWav(await bytesOf(await fetch(body.data[0].url)))).to.equal(true);
  });

  it('validates per model, and reaches an unconfigured provider only after validation', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'sim-music', prompt: 'x', duration: 200 }, 'duration'],
      [{ model: 'sim-music', prompt: 'x', n: 2 }, 'n'],
      [{ model: 'sim-music', prompt: 'x', steps: 10 }, 'steps'],
      [{ model: 'stable-audio-2.5', prompt: 'x', steps: 20 }, 'steps'],
      [{ model: 'sim-music' }, 'prompt'],
      [{ model: 'sim-tts', prompt: 'x' }, 'model'],
    ];
    for (const [request, param] of cases) {
      const res = await post(tenant, request);
      expect(res.status, JSON.stringify(request)).to.equal(400);
      expect(((await res.json()) as { error: { param: string } }).error.param, JSON.stringify(request)).to.equal(param);
    }
    const unconfigured = await post(tenant, { model: 'stable-audio-2.5', prompt: 'x', duration: 10, steps: 8, cfg_scale: 2 });
    expect(unconfigured.status).to.equal(503);
  });

  it('refunds the hold when the provider fails', async () => {
    const t = await gateway.newTenant({ credits: 10 });
    const res = await post(t, { model: 'sim-music', prompt: 'x', duration: 5 }, { 'x-simulate-failure': '500' });
    expect(res.status).to.equal(502);
    expect(await ledgerKinds(gateway.runtime.db, res.headers.get('x-request-id')!)).to.deep.equal(['reserve', 'refund']);
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(10_000_000);
  });
});
