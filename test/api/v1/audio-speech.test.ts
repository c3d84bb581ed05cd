import { expect } from 'chai';
import OpenAI from 'openai';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { isAdts, isFlac, isMp3, isOgg, isWav, ledgerKinds, withoutProviderKeys } from '../../support/media';

const FORMATS: Array<{ format: 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm'; contentType: string; magic: (b: Buffer) => boolean }> = [
  { format: 'mp3', contentType: 'audio/mpeg', magic: isMp3 },
  { format: 'opus', contentType: 'audio/ogg', magic: isOgg },
  { format: 'aac', contentType: 'audio/aac', magic: isAdts },
  { format: 'flac', contentType: 'audio/flac', magic: isFlac },
  { format: 'wav', contentType: 'audio/wav', magic: isWav },
  // Raw 16-bit samples: no header to check, but whole samples and no container of any kind.
  { format: 'pcm', contentType: 'audio/pcm', magic: (b) => b.length % 2 === 0 && !isWav(b) && !isMp3(b) && !isOgg(b) && !isFlac(b) },
];

describe('POST /v1/audio/speech', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: withoutProviderKeys() });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  const input = 'Hello from the gateway'; // 22 characters at 100 credits per 1M characters

  for (const { format, contentType, magic } of FORMATS) {
    it(`answers ${format} as ${contentType}, billed per character`, async () => {
      const response = await tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'nova', input, response_format: format });
      expect(response.headers.get('content-type')).to.equal(contentType);
      expect(response.headers.get('x-credits-used')).to.equal('0.0022');
      expect(response.headers.get('x-model-used')).to.equal('sim-tts');
      const audio = Buffer.from(await response.arrayBuffer());
      expect(audio.length).to.be.greaterThan(500);
      expect(Number(response.headers.get('content-length'))).to.equal(audio.length);
      expect(magic(audio), `${format} magic bytes`).to.equal(true);
    });
  }

  it('defaults to mp3, takes speed and instructions where the model allows them', async () => {
    const slow = await tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input, speed: 0.5, instructions: 'Calm and slow.' });
    const fast = await tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input, speed: 4 });
    expect(slow.headers.get('content-type')).to.equal('audio/mpeg');
    const [slowBytes, fastBytes] = [Buffer.from(await slow.arrayBuffer()), Buffer.from(await fast.arrayBuffer())];
    expect(isMp3(slowBytes)).to.equal(true);
    expect(slowBytes.length).to.be.greaterThan(fastBytes.length * 3);
  });

  it('validates voice, speed, format and instructions per model', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'sim-tts', voice: 'aria' }, 'voice'],
      [{ model: 'sim-tts', voice: 'alloy', speed: 4.5 }, 'speed'],
      [{ model: 'sim-tts', voice: 'alloy', speed: 0.2 }, 'speed'],
      [{ model: 'sim-tts', voice: 'alloy', response_format: 'ogg' }, 'response_format'],
      [{ model: 'tts-1', voice: 'alloy', instructions: 'whisper' }, 'instructions'],
      [{ model: 'eleven_multilingual_v2', voice: 'aria', response_format: 'flac' }, 'response_format'],
      [{ model: 'eleven_multilingual_v2', voice: 'aria', speed: 2 }, 'speed'],
      [{ model: 'sim-tts' }, 'voice'],
      [{ model: 'sim-tts', voice: 'alloy', input: '' }, 'input'],
    ];
    for (const [request, param] of cases) {
      const res = await tenant.fetch('/v1/audio/speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input, ...request }) });
      expect(res.status, JSON.stringify(request)).to.equal(400);
      const { error } = (await res.json()) as { error: { param: string; message: string } };
      expect(error.param, JSON.stringify(request)).to.equal(param);
    }
    const voices = await tenant.fetch('/v1/audio/speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-tts', voice: 'aria', input }) });
    expect(((await voices.json()) as { error: { message: string } }).error.message).to.include('alloy, echo, fable, onyx, nova, shimmer');
  });

  it('refunds the hold when the model fails', async () => {
    const t = await gateway.newTenant({ credits: 1 });
    const err = await t.client.audio.speech.create({ model: 'sim-tts-fail-500', voice: 'alloy', input }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect(err.status).to.equal(502);
    expect(await ledgerKinds(gateway.runtime.db, err.requestID)).to.deep.equal(['reserve', 'refund']);
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(1_000_000);
  });
});
