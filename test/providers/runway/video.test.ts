import { expect } from 'chai';
import { InvalidRequestError, UpstreamError } from '../../../core/errors';
import { createRunwayProvider } from '../../../providers/runway';
import type { CallContext, VideoModelAdapter, VideoSubmitRequest } from '../../../providers/types';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import error400 from './fixtures/error-400.json';
import error429 from './fixtures/error-429.json';
import error500 from './fixtures/error-500.json';
import taskCancelled from './fixtures/task-cancelled.json';
import taskCreated from './fixtures/task-created.json';
import taskFailedInternal from './fixtures/task-failed-internal.json';
import taskFailedSafety from './fixtures/task-failed-safety.json';
import taskPending from './fixtures/task-pending.json';
import taskRunning from './fixtures/task-running.json';
import taskSucceeded from './fixtures/task-succeeded.json';
import taskThrottled from './fixtures/task-throttled.json';

const API_KEY = 'key_0123456789abcdef';
const TASK_ID = taskCreated.id;
const TASK_ROUTE = `GET /v1/tasks/${TASK_ID}`;
const ctx: CallContext = { requestId: 'req_test' };

function textRequest(overrides: Partial<VideoSubmitRequest> = {}): VideoSubmitRequest {
  return { prompt: 'A lighthouse in a storm, waves crashing', durationSeconds: 5, aspectRatio: '16:9', n: 1, params: {}, ...overrides };
}

async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

function expectRunwayHeaders(req: RecordedRequest, version = '2024-11-06'): void {
  expect(req.headers.authorization).to.equal(`Bearer ${API_KEY}`);
  expect(req.headers['x-runway-version']).to.equal(version);
}

describe('createRunwayProvider', () => {
  it('is configured only with an API key', () => {
    expect(createRunwayProvider({ id: 'runway', baseUrl: 'https://api.dev.runwayml.com', apiKey: API_KEY }).configured).to.equal(true);
    expect(createRunwayProvider({ id: 'runway', baseUrl: 'https://api.dev.runwayml.com' }).configured).to.equal(false);
  });
});

describe('RunwayVideoModel', () => {
  const upstream = new FakeUpstream();
  let video: VideoModelAdapter;

  before(async () => {
    await upstream.start();
  });
  beforeEach(() => {
    video = createRunwayProvider({ id: 'runway', baseUrl: `${upstream.url}/`, apiKey: API_KEY }).video!('gen4.5');
  });
  afterEach(() => upstream.reset());
  after(() => upstream.stop());

  describe('doSubmit', () => {
    it('creates a text-to-video task and answers its id as the operation id', async () => {
      upstream.on('POST /v1/text_to_video', { json: taskCreated });

      const { operationId } = await video.doSubmit(textRequest({ params: { seed: 42 } }), ctx);

      expect(operationId).to.equal(TASK_ID);
      const [sent] = upstream.received('POST /v1/text_to_video');
      expectRunwayHeaders(sent);
      expect(sent.headers['content-type']).to.equal('application/json');
      expect(sent.json).to.deep.equal({
        model: 'gen4.5',
        promptText: 'A lighthouse in a storm, waves crashing',
        ratio: '1280:720',
        duration: 5,
        seed: 42,
      });
    });

    it('sends the image as a data URI to image_to_video', async () => {
      upstream.on('POST /v1/image_to_video', { json: taskCreated });
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

      await video.doSubmit(textRequest({ aspectRatio: '9:16', durationSeconds: 10, image: { data: png, mediaType: 'image/png' } }), ctx);

      const [sent] = upstream.received('POST /v1/image_to_video');
      expectRunwayHeaders(sent);
      expect(sent.json).to.deep.equal({
        model: 'gen4.5',
        promptText: 'A lighthouse in a storm, waves crashing',
        promptImage: `data:image/png;base64,${png.toString('base64')}`,
        ratio: '720:1280',
        duration: 10,
      });
      expect(upstream.received('POST /v1/text_to_video')).to.have.length(0);
    });

    it('passes a caller image URL through as the prompt image', async () => {
      upstream.on('POST /v1/image_to_video', { json: taskCreated });

      await video.doSubmit(textRequest({ params: { image_url: 'https://example.com/frame.jpg' } }), ctx);

      expect(upstream.received('POST /v1/image_to_video')[0].json.promptImage).to.equal('https://example.com/frame.jpg');
    });

    it('sends the operator pinned API version instead of the default one', async () => {
      upstream.on('POST /v1/text_to_video', { json: taskCreated });
      const pinned = createRunwayProvider({ id: 'runway', baseUrl: upstream.url, apiKey: API_KEY, headers: { 'X-Runway-Version': '2025-06-01' } });

      await pinned.video!('gen4.5').doSubmit(textRequest(), ctx);

      expectRunwayHeaders(upstream.received('POST /v1/text_to_video')[0], '2025-06-01');
    });

    it('keeps Runway message of a 400 and reports it as the caller error', async () => {
      upstream.on('POST /v1/text_to_video', { status: 400, json: error400 });

      const err = await rejectionOf(video.doSubmit(textRequest({ aspectRatio: '1:1' }), ctx));

      expect(err).to.be.instanceOf(UpstreamError);
      expect(err.kind).to.equal('caller_error');
      expect(err.status).to.equal(400);
      expect(err.retryable).to.equal(false);
      expect(err.message).to.contain('Validation of body failed');
      const [sent] = upstream.received('POST /v1/text_to_video');
      expectRunwayHeaders(sent);
      expect(sent.json.ratio).to.equal('960:960');
    });

    it('reports a 429 as rate limited with its Retry-After', async () => {
      upstream.on('POST /v1/text_to_video', { status: 429, headers: { 'retry-after': '7' }, json: error429 });

      const err = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(err).to.be.instanceOf(UpstreamError);
      expect(err.kind).to.equal('rate_limited');
      expect(err.retryable).to.equal(true);
      expect(err.retryAfterMs).to.equal(7000);
      expect(err.headers['retry-after']).to.equal('7');
      const [sent] = upstream.received('POST /v1/text_to_video');
      expectRunwayHeaders(sent);
      expect(sent.json.model).to.equal('gen4.5');
    });

    it('reports a 500 as a retryable server error', async () => {
      upstream.on('POST /v1/text_to_video', { status: 500, json: error500 });

      const err = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(err.kind).to.equal('server_error');
      expect(err.retryable).to.equal(true);
      expect(err.upstreamStatus).to.equal(500);
      expectRunwayHeaders(upstream.received('POST /v1/text_to_video')[0]);
    });

    it('gives up on a silent upstream after the call deadline', async () => {
      upstream.on('POST /v1/text_to_video', { hang: true });

      const started = Date.now();
      const err = await rejectionOf(video.doSubmit(textRequest(), { ...ctx, timeoutMs: 150 }));

      expect(err.kind).to.equal('timeout');
      expect(err.retryable).to.equal(true);
      expect(Date.now() - started).to.be.lessThan(5000);
      expectRunwayHeaders(upstream.received('POST /v1/text_to_video')[0]);
    });

    it('treats an answer that is not JSON, or has no task id, as a bad response', async () => {
      upstream.sequence('POST /v1/text_to_video', [
        { body: '<html>upstream proxy error</html>', headers: { 'content-type': 'text/html' } },
        { json: { status: 'PENDING' } },
      ]);

      const notJson = await rejectionOf(video.doSubmit(textRequest(), ctx));
      const noId = await rejectionOf(video.doSubmit(textRequest(), ctx));

      expect(notJson.kind).to.equal('bad_response');
      expect(noId.kind).to.equal('bad_response');
      expect(upstream.received('POST /v1/text_to_video')).to.have.length(2);
    });

    it('refuses more than one video per request before calling Runway', async () => {
      const err = await rejectionOf(video.doSubmit(textRequest({ n: 2 }), ctx));

      expect(err).to.be.instanceOf(InvalidRequestError);
      expect(err.param).to.equal('n');
      expect(upstream.requests).to.have.length(0);
    });
  });

  describe('doPoll', () => {
    it('follows a task from queued through running to its output URLs', async () => {
      upstream.sequence(TASK_ROUTE, [{ json: taskPending }, { json: taskThrottled }, { json: taskRunning }, { json: taskSucceeded }]);

      const results = [];
      for (let i = 0; i < 4; i++) results.push(await video.doPoll(TASK_ID, ctx));

      expect(results).to.deep.equal([
        { status: 'processing' },
        { status: 'processing' },
        { status: 'processing', progress: 42 },
        { status: 'succeeded', videos: [{ url: taskSucceeded.output[0], mediaType: 'video/mp4' }] },
      ]);
      const polls = upstream.received(TASK_ROUTE);
      expect(polls).to.have.length(4);
      for (const poll of polls) {
        expectRunwayHeaders(poll);
        expect(poll.raw.length).to.equal(0);
      }
    });

    it('reports an internal failure with its code as worth another try', async () => {
      upstream.on(TASK_ROUTE, { json: taskFailedInternal });

      const result = await video.doPoll(TASK_ID, ctx);

      expect(result).to.deep.equal({
        status: 'failed',
        error: 'An unexpected error occurred while generating the output. (INTERNAL.BAD_OUTPUT.CODE01)',
        retryable: true,
      });
      expectRunwayHeaders(upstream.received(TASK_ROUTE)[0]);
    });

    it('reports a moderation failure as final', async () => {
      upstream.on(TASK_ROUTE, { json: taskFailedSafety });

      const result = await video.doPoll(TASK_ID, ctx);

      expect(result).to.deep.equal({
        status: 'failed',
        error: 'Your text prompt did not pass our content moderation. (SAFETY.INPUT.TEXT)',
        retryable: false,
      });
    });

    it('reports a cancelled task as failed', async () => {
      upstream.on(TASK_ROUTE, { json: taskCancelled });

      const result = await video.doPoll(TASK_ID, ctx);

      expect(result).to.deep.include({ status: 'failed', retryable: false });
    });

    it('treats an unknown status or a success without output as a bad response', async () => {
      upstream.sequence(TASK_ROUTE, [
        { json: { ...taskPending, status: 'PROCESSING' } },
        { json: { ...taskSucceeded, output: [] } },
        { body: '{"id": "17f2', headers: { 'content-type': 'application/json' } },
      ]);

      for (let i = 0; i < 3; i++) {
        const err = await rejectionOf(video.doPoll(TASK_ID, ctx));
        expect(err.kind, `poll ${i + 1}`).to.equal('bad_response');
      }
    });

    it('reports a 429 on a poll with its Retry-After', async () => {
      upstream.on(TASK_ROUTE, { status: 429, headers: { 'retry-after': '3' }, json: error429 });

      const err = await rejectionOf(video.doPoll(TASK_ID, ctx));

      expect(err.kind).to.equal('rate_limited');
      expect(err.retryAfterMs).to.equal(3000);
      expectRunwayHeaders(upstream.received(TASK_ROUTE)[0]);
    });

    it('gives up on a silent poll after the call deadline', async () => {
      upstream.on(TASK_ROUTE, { hang: true });

      const err = await rejectionOf(video.doPoll(TASK_ID, { ...ctx, timeoutMs: 150 }));

      expect(err.kind).to.equal('timeout');
    });
  });

  describe('without an API key', () => {
    it('fails as not configured and sends nothing', async () => {
      const unconfigured = createRunwayProvider({ id: 'runway', baseUrl: upstream.url }).video!('gen4.5');

      const submitErr = await rejectionOf(unconfigured.doSubmit(textRequest(), ctx));
      const pollErr = await rejectionOf(unconfigured.doPoll(TASK_ID, ctx));

      for (const err of [submitErr, pollErr]) {
        expect(err).to.be.instanceOf(UpstreamError);
        expect(err.kind).to.equal('not_configured');
        expect(err.status).to.equal(503);
      }
      expect(upstream.requests).to.have.length(0);
    });
  });
});
