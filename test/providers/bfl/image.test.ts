import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createBflProvider } from '../../../providers/bfl';
import type { ImageGenerateRequest } from '../../../providers/types';
import { FakeUpstream, type RecordedRequest } from '../../support/fake-upstream';
import taskSubmitted from './fixtures/task-submitted.json';
import taskPending from './fixtures/task-pending.json';
import taskReady from './fixtures/task-ready.json';
import taskContentModerated from './fixtures/task-content-moderated.json';
import taskRequestModerated from './fixtures/task-request-moderated.json';
import taskError from './fixtures/task-error.json';
import tooManyTasks from './fixtures/too-many-tasks.json';
import badRequest from './fixtures/bad-request.json';
import validationError from './fixtures/validation-error.json';

const ctx = { requestId: 'req_test' };
const TASK_ID = taskSubmitted.id;
const SAMPLE_PATH = new URL(taskReady.result.sample).pathname;
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(256, 7), Buffer.from([0xff, 0xd9])]);

async function rejectionOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

describe('providers/bfl image', () => {
  const fake = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await fake.start(); });
  after(() => fake.stop());
  afterEach(() => fake.reset());

  /** The recorded URLs point at BFL's regional and delivery hosts; the test serves them itself. */
  function local(url: string): string {
    const parsed = new URL(url);
    return `${baseUrl}${parsed.pathname}${parsed.search}`;
  }

  const submitted = () => ({ ...taskSubmitted, polling_url: local(taskSubmitted.polling_url) });
  const ready = () => ({ ...taskReady, result: { ...taskReady.result, sample: local(taskReady.result.sample) } });

  function image(model = 'flux-pro-1.1', apiKey: string | undefined = 'bfl-key') {
    return createBflProvider({ id: 'bfl', baseUrl, apiKey }).image!(model);
  }

  function request(overrides: Partial<ImageGenerateRequest> = {}): ImageGenerateRequest {
    return { prompt: 'a lighthouse on a cliff at dusk', n: 1, size: '1024x768', params: {}, ...overrides };
  }

  function serveTask(states: object[]) {
    fake.on('POST /v1/*', { json: submitted() });
    fake.sequence('GET /v1/get_result', states.map((json) => ({ json })));
    fake.on(`GET ${SAMPLE_PATH}`, { headers: { 'content-type': 'image/jpeg' }, body: JPEG });
  }

  function expectKey(sent: RecordedRequest) {
    expect(sent.headers['x-key']).to.equal('bfl-key');
  }

  it('submits a task, polls it until ready and downloads the sample', async () => {
    serveTask([taskPending, ready()]);

    const result = await image().doGenerate(request({ params: { seed: 42, output_format: 'jpeg', quality: 'hd' } }), ctx);

    expect(result.images).to.have.length(1);
    expect(result.images[0].data!.equals(JPEG)).to.equal(true);
    expect(result.images[0].mediaType).to.equal('image/jpeg');
    const [submit] = fake.received('POST /v1/flux-pro-1.1');
    expectKey(submit);
    expect(submit.json).to.deep.equal({ prompt: 'a lighthouse on a cliff at dusk', seed: 42, output_format: 'jpeg', width: 1024, height: 768 });
    const polls = fake.received('GET /v1/get_result');
    expect(polls).to.have.length(2);
    polls.forEach(expectKey);
    expect(polls[0].query.get('id')).to.equal(TASK_ID);
    const [download] = fake.received(`GET ${SAMPLE_PATH}`);
    expect(download.query.get('sig')).to.equal('Zm9vYmFy');
    expect(download.headers['x-key']).to.equal(undefined);
  });

  it('sends an aspect ratio instead of pixels to the Ultra model', async () => {
    serveTask([ready()]);

    await image('flux-pro-1.1-ultra').doGenerate(request({ size: '1792x1024' }), ctx);
    await image('flux-pro-1.1-ultra').doGenerate(request({ size: undefined, params: { aspect_ratio: '21:9', raw: true } }), ctx);

    const submits = fake.received('POST /v1/flux-pro-1.1-ultra');
    expect(submits.map((r) => r.json)).to.deep.equal([
      { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '7:4' },
      { prompt: 'a lighthouse on a cliff at dusk', raw: true, aspect_ratio: '21:9' },
    ]);
  });

  it('runs one task per requested image, stepping a fixed seed', async () => {
    serveTask([ready()]);

    const result = await image().doGenerate(request({ n: 3, params: { seed: 7 } }), ctx);

    expect(result.images).to.have.length(3);
    const seeds = fake.received('POST /v1/flux-pro-1.1').map((r) => r.json.seed).sort();
    expect(seeds).to.deep.equal([7, 8, 9]);
    expect(fake.received(`GET ${SAMPLE_PATH}`)).to.have.length(3);
  });

  it('polls the documented result endpoint when the answer has no polling URL', async () => {
    fake.on('POST /v1/flux-dev', { json: { id: TASK_ID } });
    fake.on('GET /v1/get_result', { json: ready() });
    fake.on(`GET ${SAMPLE_PATH}`, { headers: { 'content-type': 'image/jpeg' }, body: JPEG });

    await image('flux-dev').doGenerate(request(), ctx);

    const [poll] = fake.received('GET /v1/get_result');
    expect(poll.query.get('id')).to.equal(TASK_ID);
    expectKey(poll);
  });

  it('refuses moderated prompts and images as caller errors', async () => {
    serveTask([taskRequestModerated]);
    const prompt = await rejectionOf(image().doGenerate(request(), ctx));
    fake.reset();
    serveTask([taskPending, taskContentModerated]);
    const output = await rejectionOf(image().doGenerate(request(), ctx));

    for (const err of [prompt, output]) {
      expect(err.kind).to.equal('caller_error');
      expect(err.code).to.equal('content_filtered');
      expect(err.retryable).to.equal(false);
    }
    expect(prompt.message).to.include('prompt');
    expect(output.message).to.include('generated image');
    expect(fake.received(`GET ${SAMPLE_PATH}`)).to.have.length(0);
  });

  it('reports a failed task as a retryable server error', async () => {
    serveTask([taskPending, taskError]);

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expect(fake.received('GET /v1/get_result')).to.have.length(2);
  });

  it('stops polling a task that stays pending once the call timeout is spent', async () => {
    serveTask([taskPending]);

    const started = Date.now();
    const err = await rejectionOf(image().doGenerate(request(), { ...ctx, timeoutMs: 900 }));

    expect(err.kind).to.equal('timeout');
    expect(Date.now() - started).to.be.lessThan(2_000);
    expect(fake.received('GET /v1/get_result').length).to.be.greaterThan(1);
  });

  it('stops at once when the caller cancels while the task is pending', async () => {
    serveTask([taskPending]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 400);

    const err = await rejectionOf(image().doGenerate(request(), { ...ctx, signal: controller.signal }));

    expect(err.kind).to.equal('network');
    expect(err.code).to.equal('upstream_cancelled');
    expect(fake.received('GET /v1/get_result')).to.have.length(1);
  });

  it('reports a 429 as rate limited with the Retry-After delay', async () => {
    fake.on('POST /v1/flux-pro-1.1', { status: 429, headers: { 'retry-after': '5' }, json: tooManyTasks });

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(5000);
    expect(err.message).to.include('active tasks');
    expectKey(fake.requests[0]);
  });

  it('reports a 500 while polling as a retryable server error', async () => {
    fake.on('POST /v1/flux-pro-1.1', { json: submitted() });
    fake.on('GET /v1/get_result', { status: 500, json: { detail: 'Internal Server Error' } });

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expectKey(fake.received('GET /v1/get_result')[0]);
  });

  it('gives up on a silent submission after the call timeout', async () => {
    fake.on('POST /v1/flux-pro-1.1', { hang: true });

    const err = await rejectionOf(image().doGenerate(request(), { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expectKey(fake.requests[0]);
  });

  it('treats answers of the wrong shape as bad responses', async () => {
    fake.sequence('POST /v1/flux-pro-1.1', [
      { headers: { 'content-type': 'text/html' }, body: '<html>oops</html>' },
      { json: { polling_url: local(taskSubmitted.polling_url) } },
      { json: submitted() },
      { json: submitted() },
    ]);
    fake.sequence('GET /v1/get_result', [
      { json: { ...taskPending, status: 'Sleeping' } },
      { json: { ...taskReady, result: {} } },
    ]);

    const errors = [
      await rejectionOf(image().doGenerate(request(), ctx)),
      await rejectionOf(image().doGenerate(request(), ctx)),
      await rejectionOf(image().doGenerate(request(), ctx)),
      await rejectionOf(image().doGenerate(request(), ctx)),
    ];

    expect(errors.map((e) => e.kind)).to.deep.equal(['bad_response', 'bad_response', 'bad_response', 'bad_response']);
  });

  it('passes a 400 on as a caller error with BFL\'s message', async () => {
    fake.on('POST /v1/flux-pro-1.1', { status: 400, json: badRequest });

    const err = await rejectionOf(image().doGenerate(request({ size: '1000x768' }), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.message).to.include('must be multiples of 32');
    expect(fake.requests[0].json.width).to.equal(1000);
    expectKey(fake.requests[0]);
  });

  it('passes a 422 validation error on as a caller error with its status', async () => {
    fake.on('POST /v1/flux-pro-1.1', { status: 422, json: validationError });

    const err = await rejectionOf(image().doGenerate(request({ size: '1000x768' }), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(422);
    expect(err.retryable).to.equal(false);
  });

  it('is not configured without an API key and then never calls upstream', async () => {
    const provider = createBflProvider({ id: 'bfl', baseUrl });

    const err = await rejectionOf(provider.image!('flux-pro-1.1').doGenerate(request(), ctx));

    expect(provider.configured).to.equal(false);
    expect(err.kind).to.equal('not_configured');
    expect(fake.requests).to.have.length(0);
  });
});
