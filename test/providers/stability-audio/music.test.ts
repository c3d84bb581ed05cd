import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createStabilityAudioProvider } from '../../../providers/stability-audio';
import type { CallContext, MusicModelAdapter, MusicRequest } from '../../../providers/types';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import error400 from './fixtures/error-400.json';
import error429 from './fixtures/error-429.json';
import error500 from './fixtures/error-500.json';

const API_KEY = 'sk-0123456789abcdef';
const ROUTE = 'POST /v2beta/audio/stable-audio-2/text-to-audio';
const ctx: CallContext = { requestId: 'req_test' };

/** The start of an MP3 as Stable Audio sends it: an ID3v2 tag, then MPEG-1 Layer III frames. */
const MP3_BYTES = Buffer.concat([
  Buffer.from('ID3'), Buffer.from([0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
  Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413),
]);
const WAV_BYTES = Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0x08, 0x00, 0x00]), Buffer.from('WAVEfmt '), Buffer.alloc(64)]);

function audioReply(data: Buffer, contentType: string, finishReason = 'SUCCESS') {
  return { headers: { 'content-type': contentType, 'finish-reason': finishReason, seed: '1234' }, body: data };
}

function musicRequest(overrides: Partial<MusicRequest> = {}): MusicRequest {
  return { prompt: 'Lo-fi hip hop beat, mellow piano, vinyl crackle', durationSeconds: 30, format: 'mp3', params: {}, ...overrides };
}

async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

async function formOf(req: RecordedRequest): Promise<Record<string, string>> {
  const form = await new Response(req.raw, { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
  const fields: Record<string, string> = {};
  form.forEach((value, name) => { fields[name] = String(value); });
  return fields;
}

function expectStabilityHeaders(req: RecordedRequest): void {
  expect(req.headers.authorization).to.equal(`Bearer ${API_KEY}`);
  expect(req.headers.accept).to.equal('audio/*');
  expect(req.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
}

describe('createStabilityAudioProvider', () => {
  it('is configured only with an API key', () => {
    expect(createStabilityAudioProvider({ id: 'stability-audio', baseUrl: 'https://api.stability.ai', apiKey: API_KEY }).configured).to.equal(true);
    expect(createStabilityAudioProvider({ id: 'stability-audio', baseUrl: 'https://api.stability.ai' }).configured).to.equal(false);
  });
});

describe('StabilityAudioMusicModel', () => {
  const upstream = new FakeUpstream();
  let music: MusicModelAdapter;

  before(async () => {
    await upstream.start();
  });
  beforeEach(() => {
    music = createStabilityAudioProvider({ id: 'stability-audio', baseUrl: `${upstream.url}/`, apiKey: API_KEY }).music!('stable-audio-2.5');
  });
  afterEach(() => upstream.reset());
  after(() => upstream.stop());

  it('sends the request as a form and answers the track bytes', async () => {
    upstream.on(ROUTE, audioReply(MP3_BYTES, 'audio/mpeg'));

    const result = await music.doGenerate(musicRequest({ params: { seed: 1234, steps: 8, cfg_scale: 1.5, instrumental: true } }), ctx);

    expect(result.tracks).to.have.length(1);
    expect(result.tracks[0].data.equals(MP3_BYTES)).to.equal(true);
    expect(result.tracks[0].mediaType).to.equal('audio/mpeg');
    expect(result.tracks[0].durationSeconds).to.equal(30);
    const [sent] = upstream.received(ROUTE);
    expectStabilityHeaders(sent);
    expect(await formOf(sent)).to.deep.equal({
      prompt: 'Lo-fi hip hop beat, mellow piano, vinyl crackle',
      duration: '30',
      model: 'stable-audio-2.5',
      output_format: 'mp3',
      seed: '1234',
      steps: '8',
      cfg_scale: '1.5',
    });
  });

  it('asks for WAV and reports its media type', async () => {
    upstream.on(ROUTE, audioReply(WAV_BYTES, 'audio/wav'));

    const result = await music.doGenerate(musicRequest({ format: 'wav', durationSeconds: 12 }), ctx);

    expect(result.tracks[0]).to.deep.include({ mediaType: 'audio/wav', durationSeconds: 12 });
    const form = await formOf(upstream.received(ROUTE)[0]);
    expect(form.output_format).to.equal('wav');
    expect(form.duration).to.equal('12');
  });

  it('does not hand out audio the content filter withheld', async () => {
    upstream.on(ROUTE, audioReply(MP3_BYTES, 'audio/mpeg', 'CONTENT_FILTERED'));

    const err = await rejectionOf(music.doGenerate(musicRequest(), ctx));

    expect(err).to.be.instanceOf(UpstreamError);
    expect(err.kind).to.equal('caller_error');
    expect(err.code).to.equal('content_filtered');
    expect(err.retryable).to.equal(false);
  });

  it('reports a 400 with Stability error body as the caller error', async () => {
    upstream.on(ROUTE, { status: 400, json: error400 });

    const err = await rejectionOf(music.doGenerate(musicRequest({ durationSeconds: 500 }), ctx));

    expect(err).to.be.instanceOf(UpstreamError);
    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.upstreamStatus).to.equal(400);
    expect(err.retryable).to.equal(false);
    const [sent] = upstream.received(ROUTE);
    expectStabilityHeaders(sent);
    expect((await formOf(sent)).duration).to.equal('500');
  });

  it('keeps the message of Stability error body on a 400', async () => {
    upstream.on(ROUTE, { status: 400, json: error400 });

    const err = await rejectionOf(music.doGenerate(musicRequest({ durationSeconds: 500 }), ctx));

    expect(err.message).to.contain('duration: must be between 1 and 190');
  });

  it('reports a 429 as rate limited with its Retry-After', async () => {
    upstream.on(ROUTE, { status: 429, headers: { 'retry-after': '60' }, json: error429 });

    const err = await rejectionOf(music.doGenerate(musicRequest(), ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryable).to.equal(true);
    expect(err.retryAfterMs).to.equal(60_000);
    expectStabilityHeaders(upstream.received(ROUTE)[0]);
  });

  it('reports a 500 as a retryable server error', async () => {
    upstream.on(ROUTE, { status: 500, json: error500 });

    const err = await rejectionOf(music.doGenerate(musicRequest(), ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expectStabilityHeaders(upstream.received(ROUTE)[0]);
  });

  it('gives up on a silent upstream after the call deadline', async () => {
    upstream.on(ROUTE, { hang: true });

    const err = await rejectionOf(music.doGenerate(musicRequest(), { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expect(err.retryable).to.equal(true);
    expectStabilityHeaders(upstream.received(ROUTE)[0]);
  });

  it('treats a success that is not audio, or is empty, as a bad response', async () => {
    upstream.sequence(ROUTE, [
      { json: { audio: MP3_BYTES.toString('base64'), finish_reason: 'SUCCESS', seed: 1234 } },
      audioReply(Buffer.alloc(0), 'audio/mpeg'),
    ]);

    const json = await rejectionOf(music.doGenerate(musicRequest(), ctx));
    const empty = await rejectionOf(music.doGenerate(musicRequest(), ctx));

    expect(json.kind).to.equal('bad_response');
    expect(empty.kind).to.equal('bad_response');
  });

  it('fails as not configured without an API key and sends nothing', async () => {
    const unconfigured = createStabilityAudioProvider({ id: 'stability-audio', baseUrl: upstream.url }).music!('stable-audio-2.5');

    const err = await rejectionOf(unconfigured.doGenerate(musicRequest(), ctx));

    expect(err).to.be.instanceOf(UpstreamError);
    expect(err.kind).to.equal('not_configured');
    expect(upstream.requests).to.have.length(0);
  });
});
