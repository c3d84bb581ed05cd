import { expect } from 'chai';
import { createGoogleProvider } from '../../../providers/google';
import { FakeUpstream } from '../../support/fake-upstream';
import veoDone from './fixtures/veo-done.json';
import veoError from './fixtures/veo-error.json';
import veoFiltered from './fixtures/veo-filtered.json';
import veoRunning from './fixtures/veo-running.json';
import veoSubmit from './fixtures/veo-submit.json';
import { ctx, upstreamFailure } from './support';

const SUBMIT = 'POST /v1beta/models/veo-3.0-generate-001:predictLongRunning';
const OPERATION = 'models/veo-3.0-generate-001/operations/9x7ffh2ea5ow';
const POLL = `GET /v1beta/${OPERATION}`;
const DOWNLOAD = 'GET /v1beta/files/3vs9bz6b1e2w:download';
const MP4 = Buffer.from('00000020667479706d703432', 'hex');

describe('google video adapter (Veo)', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function video() {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).video!('veo-3.0-generate-001');
  }

  it('submits predictLongRunning and returns the operation name as the id', async () => {
    upstream.on(SUBMIT, { json: veoSubmit });

    const { operationId } = await video().doSubmit({
      prompt: 'A cat surfing',
      n: 1,
      durationSeconds: 8,
      resolution: '1080p',
      aspectRatio: '16:9',
      personGeneration: 'allow_adult',
      image: { data: Buffer.from('fake-png'), mediaType: 'image/png' },
      params: { negative_prompt: 'cartoon', seed: 3 },
    }, ctx);

    expect(operationId).to.equal(OPERATION);
    const [sent] = upstream.received(SUBMIT);
    expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
    expect(sent.json).to.deep.equal({
      instances: [{ prompt: 'A cat surfing', image: { bytesBase64Encoded: Buffer.from('fake-png').toString('base64'), mimeType: 'image/png' } }],
      parameters: { sampleCount: 1, aspectRatio: '16:9', durationSeconds: 8, resolution: '1080p', personGeneration: 'allow_adult', negativePrompt: 'cartoon', seed: 3 },
    });
  });

  it('reports a running operation as processing without progress', async () => {
    upstream.on(POLL, { json: veoRunning });
    expect(await video().doPoll(OPERATION, ctx)).to.deep.equal({ status: 'processing' });
    expect(upstream.received(POLL)[0].headers['x-goog-api-key']).to.equal('AIza-test');
  });

  it('downloads finished videos with the key and returns their bytes', async () => {
    upstream.on(POLL, { json: JSON.parse(JSON.stringify(veoDone).replace('{{BASE_URL}}', baseUrl)) });
    upstream.on(DOWNLOAD, { headers: { 'content-type': 'video/mp4' }, body: MP4 });

    const result = await video().doPoll(OPERATION, ctx);

    expect(result).to.deep.equal({ status: 'succeeded', videos: [{ data: MP4, mediaType: 'video/mp4' }] });
    const [download] = upstream.received(DOWNLOAD);
    expect(download.query.get('alt')).to.equal('media');
    expect(download.headers['x-goog-api-key']).to.equal('AIza-test');
  });

  it('never sends the key to a download URL on another host', async () => {
    const elsewhere = new FakeUpstream();
    const elsewhereUrl = await elsewhere.start();
    try {
      elsewhere.on(DOWNLOAD, { headers: { 'content-type': 'video/mp4' }, body: MP4 });
      upstream.on(POLL, { json: JSON.parse(JSON.stringify(veoDone).replace('{{BASE_URL}}', elsewhereUrl.replace('127.0.0.1', 'localhost'))) });

      const result = await video().doPoll(OPERATION, ctx);

      expect(result.status).to.equal('succeeded');
      expect(elsewhere.received(DOWNLOAD)[0].headers['x-goog-api-key']).to.equal(undefined);
    } finally {
      await elsewhere.stop();
    }
  });

  it('reports an operation error as failed, retryable when the code is transient', async () => {
    upstream.on(POLL, { json: veoError });
    expect(await video().doPoll(OPERATION, ctx)).to.deep.equal({ status: 'failed', error: 'Video generation failed due to an internal error.', retryable: true });

    upstream.reset();
    upstream.on(POLL, { json: { ...veoError, error: { code: 3, message: 'Invalid prompt.' } } });
    expect(await video().doPoll(OPERATION, ctx)).to.deep.equal({ status: 'failed', error: 'Invalid prompt.', retryable: false });
  });

  it('reports filtered videos as a failure that is not retried', async () => {
    upstream.on(POLL, { json: veoFiltered });
    const result = await video().doPoll(OPERATION, ctx);
    expect(result).to.include({ status: 'failed', retryable: false });
    expect((result as { error: string }).error).to.contain('issue with the audio');
  });

  it('refuses operation ids that are not Veo operation names', async () => {
    const error = await video().doPoll('../../secrets', ctx).catch((err) => err);
    expect(error.code).to.equal('invalid_operation_id');
    expect(upstream.requests).to.have.length(0);
  });

  it('passes classified failures through on submit and poll', async () => {
    upstream.on(SUBMIT, { status: 400, json: { error: { code: 400, message: 'durationSeconds must be between 4 and 8', status: 'INVALID_ARGUMENT' } } });
    const submit = await upstreamFailure(video().doSubmit({ prompt: 'x', n: 1, durationSeconds: 20, params: {} }, ctx));
    expect(submit.kind).to.equal('caller_error');
    expect(submit.message).to.contain('durationSeconds must be between 4 and 8');

    upstream.on(POLL, { status: 503, json: { error: { code: 503, message: 'Unavailable', status: 'UNAVAILABLE' } } });
    const poll = await upstreamFailure(video().doPoll(OPERATION, ctx));
    expect(poll.kind).to.equal('server_error');
    expect(poll.retryable).to.equal(true);
  });
});
