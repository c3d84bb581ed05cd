import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createElevenLabsProvider } from '../../../providers/elevenlabs';
import type { SpeechRequest } from '../../../providers/types';
import { FakeUpstream } from '../../support/fake-upstream';
import voiceNotFound from './fixtures/voice-not-found.json';
import tooManyRequests from './fixtures/too-many-requests.json';
import serverError from './fixtures/server-error.json';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const ctx = { requestId: 'req_test' };

async function rejectionOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

/** An MP3-looking answer: an ID3 tag followed by 16000 bytes, one second at 128 kbps. */
function mp3Bytes(): Buffer {
  return Buffer.concat([Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1'), Buffer.alloc(16_000 - 10, 0x55)]);
}

describe('providers/elevenlabs speech', () => {
  const fake = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await fake.start(); });
  after(() => fake.stop());
  afterEach(() => fake.reset());

  function speech(apiKey: string | undefined = 'el-key', extra: { headers?: Record<string, string> } = {}) {
    const provider = createElevenLabsProvider({ id: 'elevenlabs', baseUrl, apiKey, ...extra });
    return provider.speech!('eleven_multilingual_v2');
  }

  function request(overrides: Partial<SpeechRequest> = {}): SpeechRequest {
    return { input: 'Hello there.', voice: 'rachel', format: 'mp3', speed: 1, ...overrides };
  }

  it('turns a premade voice name into its id and answers with mp3 bytes', async () => {
    const audio = mp3Bytes();
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/mpeg' }, body: audio });

    const result = await speech().doSynthesize(request(), ctx);

    expect(result.audio.equals(audio)).to.equal(true);
    expect(result.mediaType).to.equal('audio/mpeg');
    expect(result.seconds).to.equal(1);
    const [sent] = fake.received(`POST /v1/text-to-speech/${RACHEL}`);
    expect(sent.query.get('output_format')).to.equal('mp3_44100_128');
    expect(sent.headers['xi-api-key']).to.equal('el-key');
    expect(sent.json).to.deep.equal({ text: 'Hello there.', model_id: 'eleven_multilingual_v2', voice_settings: { speed: 1 } });
  });

  it('passes a value that is not a premade name through as the voice id, escaped for the path', async () => {
    fake.on('POST /v1/text-to-speech/*', { headers: { 'content-type': 'audio/mpeg' }, body: mp3Bytes() });

    await speech().doSynthesize(request({ voice: 'my/cloned voice' }), ctx);
    await speech().doSynthesize(request({ voice: 'AbCdEf0123456789' }), ctx);

    expect(fake.requests.map((r) => r.path)).to.deep.equal([
      '/v1/text-to-speech/my%2Fcloned%20voice',
      '/v1/text-to-speech/AbCdEf0123456789',
    ]);
  });

  it('asks for 24 kHz PCM and measures its exact length', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/pcm' }, body: Buffer.alloc(72_000) });

    const result = await speech().doSynthesize(request({ format: 'pcm' }), ctx);

    expect(fake.requests[0].query.get('output_format')).to.equal('pcm_24000');
    expect(result.mediaType).to.equal('audio/pcm');
    expect(result.seconds).to.equal(1.5);
  });

  it('asks for WAV and reads its length from the header', async () => {
    const wav = wavFile(Buffer.alloc(24_000), 24_000);
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/wav' }, body: wav });

    const result = await speech().doSynthesize(request({ format: 'wav' }), ctx);

    expect(fake.requests[0].query.get('output_format')).to.equal('wav_24000');
    expect(result.mediaType).to.equal('audio/wav');
    expect(result.audio.equals(wav)).to.equal(true);
    expect(result.seconds).to.equal(0.5);
  });

  it('wraps bare PCM in a WAV header when a WAV was asked for', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(48_000, 1) });

    const result = await speech().doSynthesize(request({ format: 'wav' }), ctx);

    expect(result.audio.toString('ascii', 0, 4)).to.equal('RIFF');
    expect(result.audio.toString('ascii', 8, 12)).to.equal('WAVE');
    expect(result.audio.readUInt32LE(24)).to.equal(24_000);
    expect(result.audio.length).to.equal(44 + 48_000);
    expect(result.seconds).to.equal(1);
  });

  it('asks for Ogg Opus at 64 kbps', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/ogg' }, body: Buffer.concat([Buffer.from('OggS'), Buffer.alloc(7_996)]) });

    const result = await speech().doSynthesize(request({ format: 'opus' }), ctx);

    expect(fake.requests[0].query.get('output_format')).to.equal('opus_48000_64');
    expect(result.mediaType).to.equal('audio/ogg');
    expect(result.seconds).to.equal(1);
  });

  it('keeps the speed within what ElevenLabs accepts', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/mpeg' }, body: mp3Bytes() });

    await speech().doSynthesize(request({ speed: 4 }), ctx);
    await speech().doSynthesize(request({ speed: 0.25 }), ctx);
    await speech().doSynthesize(request({ speed: 1.1 }), ctx);

    expect(fake.requests.map((r) => r.json.voice_settings.speed)).to.deep.equal([1.2, 0.7, 1.1]);
  });

  for (const format of ['flac', 'aac'] as const) {
    it(`refuses ${format} as a caller error naming the format, without calling ElevenLabs`, async () => {
      const err = await rejectionOf(speech().doSynthesize(request({ format }), ctx));

      expect(err.kind).to.equal('caller_error');
      expect(err.status).to.equal(400);
      expect(err.message).to.include(format);
      expect(err.param).to.equal('response_format');
      expect(err.retryable).to.equal(false);
      expect(fake.requests).to.have.length(0);
    });
  }

  it('sends the host headers from the provider options', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { headers: { 'content-type': 'audio/mpeg' }, body: mp3Bytes() });

    await speech('el-key', { headers: { 'x-extra': 'yes' } }).doSynthesize(request(), ctx);

    expect(fake.requests[0].headers['x-extra']).to.equal('yes');
    expect(fake.requests[0].headers['xi-api-key']).to.equal('el-key');
  });

  it('reports a 429 as rate limited with the Retry-After delay', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { status: 429, headers: { 'retry-after': '3' }, json: tooManyRequests });

    const err = await rejectionOf(speech().doSynthesize(request(), ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(3000);
    expect(err.retryable).to.equal(true);
    expect(fake.requests[0].headers['xi-api-key']).to.equal('el-key');
  });

  it('reports a 500 as a retryable server error', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { status: 500, json: serverError });

    const err = await rejectionOf(speech().doSynthesize(request(), ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expect(fake.requests[0].json.text).to.equal('Hello there.');
  });

  it('gives up on a silent upstream after the call timeout', async () => {
    fake.on(`POST /v1/text-to-speech/${RACHEL}`, { hang: true });

    const err = await rejectionOf(speech().doSynthesize(request(), { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expect(fake.requests).to.have.length(1);
  });

  it('treats a JSON or empty 200 answer as a bad response', async () => {
    fake.sequence(`POST /v1/text-to-speech/${RACHEL}`, [
      { json: { detail: 'not audio' } },
      { headers: { 'content-type': 'audio/mpeg' }, body: '' },
    ]);

    const jsonAnswer = await rejectionOf(speech().doSynthesize(request(), ctx));
    const emptyAnswer = await rejectionOf(speech().doSynthesize(request(), ctx));

    expect(jsonAnswer.kind).to.equal('bad_response');
    expect(emptyAnswer.kind).to.equal('bad_response');
    expect(fake.requests).to.have.length(2);
  });

  it('reports an unknown voice as a caller error with the upstream status', async () => {
    fake.on('POST /v1/text-to-speech/no-such-voice', { status: 400, json: voiceNotFound });

    const err = await rejectionOf(speech().doSynthesize(request({ voice: 'no-such-voice' }), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.upstreamStatus).to.equal(400);
    expect(err.retryable).to.equal(false);
    expect(fake.requests[0].path).to.equal('/v1/text-to-speech/no-such-voice');
  });

  it('keeps ElevenLabs\' own message for a rejected request', async () => {
    fake.on('POST /v1/text-to-speech/no-such-voice', { status: 400, json: voiceNotFound });

    const err = await rejectionOf(speech().doSynthesize(request({ voice: 'no-such-voice' }), ctx));

    expect(err.message).to.contain(voiceNotFound.detail.message);
  });

  it('is not configured without an API key and then never calls upstream', async () => {
    const provider = createElevenLabsProvider({ id: 'elevenlabs', baseUrl });

    const err = await rejectionOf(provider.speech!('eleven_multilingual_v2').doSynthesize(request(), ctx));

    expect(provider.configured).to.equal(false);
    expect(err.kind).to.equal('not_configured');
    expect(err.status).to.equal(503);
    expect(fake.requests).to.have.length(0);
  });
});

/** A WAV file as ElevenLabs sends it: canonical header, 16-bit mono samples. */
function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}
