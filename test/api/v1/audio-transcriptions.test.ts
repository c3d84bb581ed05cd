import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { ledgerKinds, withoutProviderKeys } from '../../support/media';

const SPOKEN = 'The quick brown fox jumps over the lazy dog near the river bank';

describe('POST /v1/audio/transcriptions', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let wav: Buffer;
  let mp3: Buffer;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: withoutProviderKeys({ MAX_UPLOAD_BYTES: '300000' }) });
    tenant = await gateway.newTenant({ credits: 100 });
    // Real audio from the speech endpoint (the simulated voice carries its text, so it transcribes back exactly).
    wav = Buffer.from(await (await tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input: SPOKEN, response_format: 'wav' })).arrayBuffer());
    mp3 = Buffer.from(await (await tenant.client.audio.speech.create({ model: 'sim-tts', voice: 'alloy', input: SPOKEN, response_format: 'mp3' })).arrayBuffer());
  });
  after(() => gateway?.stop());

  /** Seconds of a 16-bit mono 24 kHz WAV with a 44-byte header (what sim-tts writes, plus its LIST chunk). */
  function wavSeconds(data: Buffer): number {
    const dataAt = data.indexOf('data', 12, 'latin1');
    return data.readUInt32LE(dataAt + 4) / 48_000;
  }

  it('transcribes a multipart upload from the official client, billed per second of audio', async () => {
    const { data, response } = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await toFile(wav, 'speech.wav') }).withResponse();
    expect(data.text).to.equal(SPOKEN);
    const seconds = wavSeconds(wav);
    const usage = (data as unknown as { usage: { type: string; seconds: number } }).usage;
    expect(usage.type).to.equal('duration');
    expect(usage.seconds).to.be.closeTo(seconds, 0.002);
    // 0.005 credits a second, to the millisecond: the charge is exactly the measured length's.
    const expectedMicro = Math.ceil(Math.round(usage.seconds * 1000) * 5);
    expect(Number(response.headers.get('x-credits-used'))).to.equal(expectedMicro / 1e6);
    expect((data as unknown as { credits_used: number }).credits_used).to.equal(expectedMicro / 1e6);
    expect(await gateway.runtime.storage.exists(`uploads/${response.headers.get('x-request-id')}/0-file`)).to.equal(false);
  });

  it('reserves on the estimate from the upload, then settles on the measured length', async () => {
    const { response } = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await toFile(mp3, 'speech.mp3') }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const rows = await gateway.runtime.db('credit_ledger').where({ request_id: requestId }).orderBy('id').select('kind', 'amount_micro');
    expect(rows.map((r: { kind: string }) => r.kind)).to.deep.equal(['reserve', 'release', 'settle']);
    // mp3 is reserved at 64 kbit/s from its size; the settlement is its measured length.
    const reservedSeconds = Math.ceil(mp3.length / 8000);
    expect(Number(rows[0].amount_micro)).to.equal(-reservedSeconds * 5000);
    expect(Number(rows[2].amount_micro)).to.equal(-Math.round(Number(response.headers.get('x-credits-used')) * 1e6));
    expect(Number(rows[2].amount_micro)).to.not.equal(Number(rows[0].amount_micro));
  });

  it('answers text, srt and vtt as plain text, and verbose_json with segments and words', async () => {
    const file = async () => toFile(wav, 'speech.wav');
    const text = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await file(), response_format: 'text' });
    expect(text).to.equal(`${SPOKEN}\n`);
    const srtRes = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await file(), response_format: 'srt' }).asResponse();
    expect(srtRes.headers.get('content-type')).to.match(/^text\/plain/);
    const srt = await srtRes.text();
    expect(srt).to.match(/^1\n00:00:00,000 --> 00:00:0\d,\d{3}\n/);
    expect(srt.replace(/^\d+\n.*-->.*\n/gm, '').split('\n').filter(Boolean).join(' ')).to.equal(SPOKEN);
    const vtt = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await file(), response_format: 'vtt' });
    expect(vtt as unknown as string).to.match(/^WEBVTT\n\n00:00:00\.000 --> /);
    const verbose = await tenant.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await file(), response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'], language: 'en' });
    expect(verbose.text).to.equal(SPOKEN);
    expect(verbose.language).to.equal('english');
    expect(verbose.duration).to.be.closeTo(wavSeconds(wav), 0.002);
    expect(verbose.segments!.map((s) => s.text).join(' ')).to.equal(SPOKEN);
    expect(verbose.words!.map((w) => w.word).join(' ')).to.equal(SPOKEN);
    const ends = verbose.words!.map((w) => w.end);
    expect(ends).to.deep.equal([...ends].sort((a, b) => a - b));
  });

  it('takes JSON with the audio in base64 or as a data URL', async () => {
    const plain = await tenant.fetch('/v1/audio/transcriptions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-transcribe', file: wav.toString('base64'), filename: 'speech.wav' }),
    });
    expect(plain.status).to.equal(200);
    expect(((await plain.json()) as { text: string }).text).to.equal(SPOKEN);
    const dataUrl = await tenant.fetch('/v1/audio/transcriptions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-transcribe', file: `data:audio/mpeg;base64,${mp3.toString('base64')}`, response_format: 'text' }),
    });
    expect(dataUrl.status).to.equal(200);
    expect(dataUrl.headers.get('content-type')).to.match(/^text\/plain/);
    expect(await dataUrl.text()).to.equal(`${SPOKEN}\n`);
  });

  it('validates the request against the model', async () => {
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ model: 'sim-transcribe' }, 'file', 400],
      [{ model: 'sim-transcribe', file: 'not base64 at all!' }, 'file', 400],
      [{ model: 'sim-transcribe', file: wav.toString('base64'), timestamp_granularities: ['word'] }, 'timestamp_granularities', 400],
      [{ model: 'whisper-large-v3', file: wav.toString('base64'), response_format: 'srt' }, 'response_format', 400],
      [{ model: 'gpt-4o-transcribe', file: wav.toString('base64'), timestamp_granularities: ['segment'], response_format: 'json' }, 'timestamp_granularities', 400],
      [{ model: 'sim-transcribe', file: wav.toString('base64'), temperature: 3 }, 'temperature', 400],
      [{ model: 'sim-tts', file: wav.toString('base64') }, 'model', 400],
    ];
    for (const [request, param, status] of cases) {
      const res = await tenant.fetch('/v1/audio/transcriptions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) });
      expect(res.status, JSON.stringify(request).slice(0, 120)).to.equal(status);
      expect(((await res.json()) as { error: { param: string } }).error.param, JSON.stringify(request).slice(0, 120)).to.equal(param);
    }
  });

  it('refuses audio over the upload limit with 413 and charges nothing', async () => {
    const t = await gateway.newTenant({ credits: 5 });
    const big = Buffer.concat([wav.subarray(0, 44), Buffer.alloc(400_000, 3)]);
    const multipart = await t.client.audio.transcriptions.create({ model: 'sim-transcribe', file: await toFile(big, 'big.wav') }).catch((e) => e);
    expect(multipart).to.be.instanceOf(OpenAI.APIError);
    expect(multipart.status).to.equal(413);
    const json = await t.fetch('/v1/audio/transcriptions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-transcribe', file: big.toString('base64') }),
    });
    expect(json.status).to.equal(413);
    expect(((await json.json()) as { error: { code: string } }).error.code).to.equal('file_too_large');
    for (const requestId of [multipart.requestID, json.headers.get('x-request-id')!]) {
      expect(await ledgerKinds(gateway.runtime.db, requestId)).to.deep.equal([]);
      expect(await gateway.runtime.storage.exists(`uploads/${requestId}/0-file`)).to.equal(false);
    }
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(5_000_000);
  });
});
