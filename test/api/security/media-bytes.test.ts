import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { id3v2Size } from '../../../core/media-probe';
import { InvalidRequestError } from '../../../core/errors';
import { creditsToMicro } from '../../../core/money';
import { getBalance } from '../../../domain/ledger';
import { addOperatorCredits } from '../../../domain/payments';
import { encodeAudio } from '../../../simulator/media/audio';
import { synthesizeSpeech } from '../../../simulator/media/synth';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { pngImage } from '../../support/media';

/** An ID3v2.4 tag of `bytes` (cover art makes them this large), so the first audio frame is far in. */
function id3Tag(bytes: number): Buffer {
  const size = Buffer.from([(bytes >> 21) & 0x7f, (bytes >> 14) & 0x7f, (bytes >> 7) & 0x7f, bytes & 0x7f]);
  return Buffer.concat([Buffer.from('ID3\x04\x00\x00', 'latin1'), size, Buffer.alloc(bytes, 0x41)]);
}

describe('security: inputs taken for what they are (media by their bytes, exact amounts, chains of one modality), before any charge', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  const speech = synthesizeSpeech('Only real audio is transcribed.', 'alloy', 1);
  const TEXT = Buffer.from('This is a plain text file pretending to be audio.\n'.repeat(20));
  let png: Buffer;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    png = await pngImage(32, 32);
  });
  after(() => gateway?.stop());

  async function expectRefused(tenant: Tenant, err: unknown, code: string, param: string): Promise<void> {
    expect(err, String(err)).to.be.instanceOf(OpenAI.APIError);
    const apiError = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).to.equal(400);
    expect(apiError.error).to.include({ type: 'invalid_request_error', code, param });
    expect(await gateway.runtime.db('credit_ledger').where({ request_id: apiError.requestID }).pluck('kind')).to.deep.equal([]);
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
    expect(await gateway.runtime.storage.exists(`uploads/${apiError.requestID}/0-file`)).to.equal(false);
  }

  it('refuses a text file or a PNG sent for transcription, however it is named', async () => {
    const tenant = await gateway.newTenant({ credits: 10 });
    for (const [data, name, type] of [[TEXT, 'speech.mp3', 'audio/mpeg'], [TEXT, 'notes.txt', 'text/plain'], [png, 'speech.wav', 'audio/wav'], [png, 'picture.png', 'image/png']] as const) {
      const err = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await toFile(data, name, { type }) }).catch((e) => e);
      await expectRefused(tenant, err, 'invalid_audio_format', 'file');
    }
  });

  it('refuses the same in a JSON body (base64 or data URL)', async () => {
    const tenant = await gateway.newTenant({ credits: 10 });
    for (const file of [TEXT.toString('base64'), `data:audio/wav;base64,${png.toString('base64')}`]) {
      const res = await tenant.fetch('/v1/audio/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-transcribe', file, filename: 'a.wav' }) });
      const body = (await res.json()) as { error: { code: string; param: string } };
      expect(res.status).to.equal(400);
      expect(body.error).to.include({ code: 'invalid_audio_format', param: 'file' });
      expect(await gateway.runtime.db('credit_ledger').where({ request_id: res.headers.get('x-request-id') })).to.deep.equal([]);
    }
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });

  it('still takes real audio, also when its first frame lies past a large tag', async () => {
    const tenant = await gateway.newTenant({ credits: 10 });
    const mp3 = encodeAudio('mp3', speech);
    const tagged = Buffer.concat([id3Tag(100 * 1024), mp3.subarray(id3v2Size(mp3))]);
    for (const [data, name] of [[encodeAudio('wav', speech), 'a.wav'], [encodeAudio('flac', speech), 'a.flac'], [encodeAudio('opus', speech), 'a.ogg'], [tagged, 'tagged.mp3']] as const) {
      const { data: result, response } = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await toFile(data, name) }).withResponse();
      expect(result.text, name).to.be.a('string').and.not.equal('');
      expect(Number(response.headers.get('x-credits-used')), name).to.be.greaterThan(0);
    }
  });

  it('refuses an image edit whose image or mask is not an image, before any charge', async () => {
    const tenant = await gateway.newTenant({ credits: 10 });
    const wav = encodeAudio('wav', speech);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ image: await toFile(TEXT, 'photo.png', { type: 'image/png' }) }, 'image'],
      [{ image: await toFile(wav, 'photo.jpg', { type: 'image/jpeg' }) }, 'image'],
      [{ image: await toFile(png, 'a.png', { type: 'image/png' }), mask: await toFile(TEXT, 'mask.png', { type: 'image/png' }) }, 'mask'],
    ];
    for (const [files, param] of cases) {
      const err = await tenant.client.images.edit({ model: 'sim-image', prompt: 'tint it', ...files } as never).catch((e) => e);
      expect(err, param).to.be.instanceOf(OpenAI.APIError);
      expect(err.status).to.equal(400);
      expect(err.error).to.include({ code: 'invalid_image_format', param });
      expect(await gateway.runtime.db('credit_ledger').where({ request_id: err.requestID })).to.deep.equal([]);
    }
    expect((await getBalance(gateway.runtime.db, tenant.workspaceId)).totalMicro).to.equal(10_000_000);
  });

  it('refuses credits finer than a micro-credit from operators, and fallback chains across modalities', async () => {
    const owner = await gateway.newTenant({ credits: 10 });
    for (const credits of ['1.0000005', '0.0000001', '1e-7', '2.1234567']) {
      await expectCreditsRefused(() => addOperatorCredits(gateway.runtime.db, { workspaceId: owner.workspaceId, amountMicro: toMicroOrZero(credits), operator: 'ops', reason: 'fine', idempotencyKey: `fine-${credits}` }), credits);
    }
    expect((await getBalance(gateway.runtime.db, owner.workspaceId)).totalMicro).to.equal(10_000_000);
    expect(creditsToMicro('1.000001')).to.equal(1_000_001);
    await addOperatorCredits(gateway.runtime.db, { workspaceId: owner.workspaceId, amountMicro: creditsToMicro('1.000001'), operator: 'ops', reason: 'exact', idempotencyKey: 'exact' });
    expect((await getBalance(gateway.runtime.db, owner.workspaceId)).totalMicro).to.equal(11_000_001);

    const chain = (model: string, models: string[]) => owner.fetch(`/v1/fallback-chains/${model}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: models }) });
    const mixed = await chain('sim-chat', ['sim-chat-mini', 'sim-embed']);
    expect(mixed.status).to.equal(400);
    expect(((await mixed.json()) as { error: { code: string; param: string } }).error).to.include({ code: 'fallback_modality_mismatch', param: 'chain[1]' });
    expect((await chain('sim-image', ['sim-chat'])).status).to.equal(400);
    expect((await chain('sim-chat', ['sim-chat-mini'])).status).to.equal(200);
    expect(((await (await owner.fetch('/v1/fallback-chains')).json()) as { data: unknown[] }).data).to.deep.equal([{ object: 'fallback_chain', model: 'sim-chat', chain: ['sim-chat-mini'] }]);
  });
});

/** Decimal credits to micro-credits, or 0 (refused downstream) when finer than a micro-credit, as the operator routes read them. */
function toMicroOrZero(credits: string): number {
  try {
    return creditsToMicro(credits);
  } catch {
    return 0;
  }
}

async function expectCreditsRefused(run: () => Promise<unknown>, label: string): Promise<void> {
  const err = await run().then(() => null, (e: unknown) => e);
  expect(err, label).to.be.instanceOf(InvalidRequestError);
  expect((err as InvalidRequestError).param, label).to.equal('credits');
}
