import { expect } from 'chai';
import { InvalidRequestError, UpstreamError } from '../../../core/errors';
import { createLumaProvider } from '../../../providers/luma';
import type { CallContext, VideoModelAdapter, VideoSubmitRequest } from '../../../providers/types';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import error400 from './fixtures/error-400.json';
import error429 from './fixtures/error-429.json';
import error500 from './fixtures/error-500.json';
import generationCompleted from './fixtures/generation-completed.json';
import generationDreaming from './fixtures/generation-dreaming.json';
import generationFailed from './fixtures/generation-failed.json';
import generationQueued from './fixtures/generation-queued.json';

const API_KEY = 'luma-0123456789abcdef';
const GENERATION_ID = generationQueued.id;
const CREATE_ROUTE = 'POST /dream-machine/v1/generations';
const GET_ROUTE = `GET /dream-machine/v1/generations/${GENERATION_ID}`;
const ctx: CallContext = { requestId: 'req_test' };

function textRequest(overrides: Partial<VideoSubmitRequest> = {}): VideoSubmitRequest {
  return { prompt: 'A tiger walking in snow', durationSeconds: 5, resolution: '720p', aspectRatio: '16:9', n: 1, params: {}, ...overrides };
}

async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

function expectLumaHeaders(req: RecordedRequest): void {
  expect(req.headers.authorization).to.equal(`Bearer ${API_KEY}`);
  expect(req.headers.accept).to.equal('application/json');
}

describe('createLumaProvider', () => {
  it('is configured only with an API key', () => {
    expect(createLumaProvider({ id: 'luma', baseUrl: 'https://api.lumalabs.ai', apiKey: API_KEY }).configured).to.equal(true);
    expect(createLumaProvider({ id: 'luma', baseUrl: 'https://api.lumalabs.ai' }).configured).to.equal(false);
  });
});

describe('LumaVideoModel', () => {
  const upstream = new FakeUpstream();
  let video: VideoModelAdapter;

  before(async () => {
    await upstream.start();
  });
  beforeEach(() => {
    video = createLumaProvider({ id: 'luma', baseUrl: `${upstream.url}/`, apiKey: API_KEY }).video!('ray-2');
  });
  afterEach(() => upstream.reset());
  after(() => upstream.stop());

  describe('doSubmit', () => {
    it('creates a generation and answers its id as the operation id', async () => {
      upstream.on(CREATE_ROUTE, { status: 201, json: generationQueued });

      const { operationId } = await video.doSubmit(textRequest({ params: { loop: false } }), ctx);

      expect(operationId).to.equal(GENERATION_ID);
      const [sent] = upstream.received(CREATE_ROUTE);
      expectLumaHeaders(sent);
      expect(sent.headers['content-type']).to.equal('application/json');
      expect(sent.json).to.deep.equal({
        prompt: 'A tiger walking in snow',
        model: 'ray-2',
        resolution: '720p',
        duration: '5s',
        aspect_ratio: '16:9',
        loop: false,
      });
    });

    it('sends an image URL as the first keyframe', async () => {
      upstream.on(CREATE_ROUTE, { status: 201, json: generationQueued });

      await video.doSubmit(textRequest({ resolution: '1920x1080', durationSeconds: 9, params: { image_url: 'https://example.com/tiger.jpg' } }), ctx);

      const [sent] = upstream.received(CREATE_ROUTE);
      expectLumaHeaders(sent);
      expect(sent.json).to.deep.equal({
        prompt: 'A tiger walking in snow',
        model: 'ray-2',
        resolution: '1080p',
        duration: '9s',
        aspect_ratio: '16:9',
        keyframes: { frame0: { type: 'image', url: 'https://example.com/tiger.jpg' } },
      });
    });

    it('refuses inline image bytes, which Luma cannot take, before calling it', async () => {
      const err = await rejectionOf(video.doSubmit(textRequest({ image: { data: Buffer.from('jpeg'), mediaType: 'image/jpeg' } }), ctx));

      expect(err).to.be.instanceOf(InvalidRequestError);
      expect(err.param).to.equal('image_base64');
      expect(err.message).to.contain('image_url');
      expect(upstream.requests).to.have.length(0);
    });

    it('refuses more than one video per request before calling Luma', async () => {
      const err = await rejectionOf(video.doSubmit(textRequest({ n: 3 }), ctx));

      expect(err).to.be.instanceOf(InvalidRequestError);
      expect(err.param).to.equal('n');
      expect(upstream.requests).to.have.length(0);
    });

    it('keeps Luma message of a 400 and reports it as the caller error', async () => {
      upstream.on(CREATE_ROUTE, { status: 400, json: error400 });

      const err = await rejectionOf(video.doSubmit(textRequest({ resolution: '4k' }), ctx));

      expect(err).to.be.instanceOf(UpstreamError);
      expect(err.kind).to.equal('caller_error');
      expect(err.status).to.equal(400);
      expect(err.retryable).to.equal(false);
      expect(err.message).to.contain('resolution 4k is not supported for model ray-flash-2');
      const [sent] = upstream.received(CREATE_ROUTE);
      expectLumaHeaders(sent);
      expect(sent.json.resolution).to.equal('4k');
    });

    it('reports a 429 as rate limited with its Retry-After', async () => {
      upstream.on(CREATE_ROUTE, { status: 429, headers: { 'retry-after': '12' }, json: error429 });

      const err = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(err.kind).to.equal('rate_limited');
      expect(err.retryable).to.equal(true);
      expect(err.retryAfterMs).to.equal(12_000);
      expect(err.message).to.contain('Too many concurrent generations');
      const [sent] = upstream.received(CREATE_ROUTE);
      expectLumaHeaders(sent);
      expect(sent.json.prompt).to.equal('A tiger walking in snow');
    });

    it('reports a 500 as a retryable server error', async () => {
      upstream.on(CREATE_ROUTE, { status: 500, json: error500 });

      const err = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(err.kind).to.equal('server_error');
      expect(err.retryable).to.equal(true);
      expectLumaHeaders(upstream.received(CREATE_ROUTE)[0]);
    });

    it('gives up on a silent upstream after the call deadline', async () => {
      upstream.on(CREATE_ROUTE, { hang: true });

      const err = await rejectionOf(video.doSubmit(textRequest(), { ...ctx, timeoutMs: 150 }));

      expect(err.kind).to.equal('timeout');
      expect(err.retryable).to.equal(true);
      expectLumaHeaders(upstream.received(CREATE_ROUTE)[0]);
    });

    it('treats an answer that is not JSON, or has no id, as a bad response', async () => {
      upstream.sequence(CREATE_ROUTE, [
        { body: 'Bad Gateway', headers: { 'content-type': 'text/plain' } },
        { json: { state: 'queued' } },
      ]);

      const notJson = await rejectionOf(video.doSubmit(textRequest(), ctx));
      const noId = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(notJson.kind).to.equal('bad_response');
      expect(noId.kind).to.equal('bad_response');
    });
  });

  describe('doPoll', () => {
    it('follows a generation from queued through dreaming to its video URL', async () => {
      upstream.sequence(GET_ROUTE, [{ json: generationQueued }, { json: generationDreaming }, { json: generationCompleted }]);

      const results = [];
      for (let i = 0; i < 3; i++) results.push(await video.doPoll(GENERATION_ID, ctx));

      expect(results).to.deep.equal([
        { status: 'processing' },
        { status: 'processing' },
        { status: 'succeeded', videos: [{ url: generationCompleted.assets.video, mediaType: 'video/mp4', durationSeconds: 5 }] },
      ]);
      const polls = upstream.received(GET_ROUTE);
      expect(polls).to.have.length(3);
      for (const poll of polls) {
        expectLumaHeaders(poll);
        expect(poll.raw.length).to.equal(0);
      }
    });

    it('reports a failed generation with Luma reason', async () => {
      upstream.on(GET_ROUTE, { json: generationFailed });

      const result = await video.doPoll(GENERATION_ID, ctx);

      expect(result).to.deep.equal({ status: 'failed', error: 'Prompt not allowed because it contains blacklisted words', retryable: false });
      expectLumaHeaders(upstream.received(GET_ROUTE)[0]);
    });

    it('treats an unknown state or a completion without a video as a bad response', async () => {
      upstream.sequence(GET_ROUTE, [
        { json: { ...generationQueued, state: 'rendering' } },
        { json: { ...generationCompleted, assets: { video: null, image: null, progress_video: null } } },
        { body: '', headers: { 'content-type': 'application/json' } },
      ]);

      for (let i = 0; i < 3; i++) {
        const err = await rejectionOf(video.doPoll(GENERATION_ID, ctx));
        expect(err.kind, `poll ${i + 1}`).to.equal('bad_response');
      }
    });

    it('reports a 503 on a poll as a retryable server error', async () => {
      upstream.on(GET_ROUTE, { status: 503, headers: { 'retry-after': '5' }, json: error500 });

      const err = await rejectionOf(video.doPoll(GENERATION_ID, ctx));

      expect(err.kind).to.equal('server_error');
      expect(err.retryable).to.equal(true);
      expect(err.retryAfterMs).to.equal(5000);
    });

    it('gives up on a silent poll after the call deadline', async () => {
      upstream.on(GET_ROUTE, { hang: true });

      const err = await rejectionOf(video.doPoll(GENERATION_ID, { ...ctx, timeoutMs: 150 }));

      expect(err.kind).to.equal('timeout');
    });
  });

  describe('without an API key', () => {
    it('fails as not configured and sends nothing', async () => {
      const unconfigured = createLumaProvider({ id: 'luma', baseUrl: upstream.url }).video!('ray-2');

      const submitErr = await rejectionOf(unconfigured.doSubmit(textRequest(), ctx));
      const pollErr = await rejectionOf(unconfigured.doPoll(GENERATION_ID, ctx));

      for (const err of [submitErr, pollErr]) {
        expect(err).to.be.instanceOf(UpstreamError);
        expect(err.kind).to.equal('not_configured');
      }
      expect(upstream.requests).to.have.length(0);
    });
  });
});
