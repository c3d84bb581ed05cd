import { expect } from 'chai';
import { UpstreamError } from '../../../core/errors';
import { createStabilityProvider } from '../../../providers/stability';
import type { ImageEditRequest, ImageGenerateRequest } from '../../../providers/types';
import { FakeUpstream, type FakeReply, type RecordedRequest } from '../../support/fake-upstream';
import { decodeGrayPng, encodePng } from './png';
import badRequest from './fixtures/bad-request.json';
import contentModeration from './fixtures/content-moderation.json';
import rateLimited from './fixtures/rate-limited.json';
import serverError from './fixtures/server-error.json';

const ctx = { requestId: 'req_test' };
const CORE = '/v2beta/stable-image/generate/core';
const INPAINT = '/v2beta/stable-image/edit/inpaint';
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(64, 3)]);
const PNG = encodePng(2, 2, 6, () => [10, 20, 30, 255]);

async function rejectionOf(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

/** The multipart form a request carried, parsed the way a server would. */
function formOf(req: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(req.raw), { headers: { 'content-type': String(req.headers['content-type']) } }).formData();
}

async function fieldsOf(req: RecordedRequest): Promise<Record<string, string>> {
  const fields: Record<string, string> = {};
  for (const [name, value] of await formOf(req)) if (typeof value === 'string') fields[name] = value;
  return fields;
}

function imageReply(data: Buffer, contentType: string, finishReason = 'SUCCESS'): FakeReply {
  return { headers: { 'content-type': contentType, 'finish-reason': finishReason, seed: '1029384756' }, body: data };
}

describe('providers/stability image', () => {
  const fake = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await fake.start(); });
  after(() => fake.stop());
  afterEach(() => fake.reset());

  function image(model = 'core', apiKey: string | undefined = 'sk-stability') {
    return createStabilityProvider({ id: 'stability', baseUrl, apiKey }).image!(model);
  }

  function request(overrides: Partial<ImageGenerateRequest> = {}): ImageGenerateRequest {
    return { prompt: 'a red fox in fresh snow', n: 1, size: '1792x1024', params: {}, ...overrides };
  }

  function editRequest(overrides: Partial<ImageEditRequest> = {}): ImageEditRequest {
    return { ...request({ size: undefined }), images: [{ data: PNG, filename: 'fox.png', mediaType: 'image/png' }], ...overrides };
  }

  function expectAuthorized(sent: RecordedRequest) {
    expect(sent.method).to.equal('POST');
    expect(sent.headers.authorization).to.equal('Bearer sk-stability');
    expect(sent.headers.accept).to.equal('image/*');
    expect(sent.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
  }

  it('generates with Core from a multipart form and answers the image bytes', async () => {
    fake.on(`POST ${CORE}`, imageReply(WEBP, 'image/webp'));

    const result = await image().doGenerate(request({ params: { seed: 42, output_format: 'webp', quality: 'hd' } }), ctx);

    expect(result.images).to.have.length(1);
    expect(result.images[0].data!.equals(WEBP)).to.equal(true);
    expect(result.images[0].mediaType).to.equal('image/webp');
    const [sent] = fake.received(`POST ${CORE}`);
    expectAuthorized(sent);
    expect(await fieldsOf(sent)).to.deep.equal({ prompt: 'a red fox in fresh snow', seed: '42', output_format: 'webp', aspect_ratio: '16:9' });
  });

  it('sends a negative prompt and style preset only when given, and a requested aspect ratio as is', async () => {
    fake.on(`POST ${CORE}`, imageReply(PNG, 'image/png'));

    await image().doGenerate(request({ size: undefined, params: { negative_prompt: 'blurry', style_preset: 'photographic', aspect_ratio: '9:21' } }), ctx);
    await image().doGenerate(request({ size: '1024x1536', params: { negative_prompt: '' } }), ctx);

    const [withExtras, plain] = await Promise.all(fake.requests.map(fieldsOf));
    expect(withExtras).to.deep.equal({
      prompt: 'a red fox in fresh snow', negative_prompt: 'blurry', style_preset: 'photographic', output_format: 'png', aspect_ratio: '9:21',
    });
    expect(plain).to.deep.equal({ prompt: 'a red fox in fresh snow', output_format: 'png', aspect_ratio: '2:3' });
  });

  it('routes Ultra and SD3 models to their endpoints, naming the SD3 model in the form', async () => {
    fake.on('POST /v2beta/stable-image/generate/*', imageReply(PNG, 'image/png'));

    await image('ultra').doGenerate(request(), ctx);
    await image('sd3.5-large').doGenerate(request(), ctx);

    expect(fake.requests.map((r) => r.path)).to.deep.equal(['/v2beta/stable-image/generate/ultra', '/v2beta/stable-image/generate/sd3']);
    expect((await fieldsOf(fake.requests[0])).model).to.equal(undefined);
    expect((await fieldsOf(fake.requests[1])).model).to.equal('sd3.5-large');
  });

  it('makes one call per requested image, stepping a fixed seed', async () => {
    fake.on(`POST ${CORE}`, imageReply(PNG, 'image/png'));

    const result = await image().doGenerate(request({ n: 3, params: { seed: 100 } }), ctx);

    expect(result.images).to.have.length(3);
    const seeds = (await Promise.all(fake.requests.map(fieldsOf))).map((f) => f.seed).sort();
    expect(seeds).to.deep.equal(['100', '101', '102']);
    fake.requests.forEach(expectAuthorized);
  });

  it('withholds an image Stability filtered, as a caller error', async () => {
    fake.on(`POST ${CORE}`, imageReply(PNG, 'image/png', 'CONTENT_FILTERED'));

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.code).to.equal('content_filtered');
    expectAuthorized(fake.requests[0]);
  });

  it('reports a prompt refused by moderation (403) as the caller\'s, with Stability\'s message', async () => {
    fake.on(`POST ${CORE}`, { status: 403, json: contentModeration });

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.code).to.equal('content_filtered');
    expect(err.message).to.include('flagged by our content moderation system');
  });

  it('inpaints the image with the mask turned into Stability\'s black-and-white form', async () => {
    fake.on(`POST ${INPAINT}`, imageReply(PNG, 'image/png'));
    const mask = encodePng(2, 2, 6, (x) => (x === 0 ? [0, 0, 0, 0] : [0, 0, 0, 255]));

    const result = await image().doEdit!(editRequest({
      params: { seed: 9, output_format: 'png', negative_prompt: 'people' },
      mask: { data: mask, filename: 'mask.png', mediaType: 'image/png' },
    }), ctx);

    expect(result.images[0].data!.equals(PNG)).to.equal(true);
    const [sent] = fake.received(`POST ${INPAINT}`);
    expectAuthorized(sent);
    expect(await fieldsOf(sent)).to.deep.equal({ prompt: 'a red fox in fresh snow', negative_prompt: 'people', seed: '9', output_format: 'png' });
    const form = await formOf(sent);
    const sentImage = form.get('image') as File;
    expect(sentImage.name).to.equal('fox.png');
    expect(sentImage.type).to.equal('image/png');
    expect(Buffer.from(await sentImage.arrayBuffer()).equals(PNG)).to.equal(true);
    const sentMask = form.get('mask') as File;
    expect(sentMask.type).to.equal('image/png');
    expect(decodeGrayPng(Buffer.from(await sentMask.arrayBuffer())).pixels).to.deep.equal([255, 0, 255, 0]);
  });

  it('inpaints without a mask field when none is given, so the image\'s own transparency applies', async () => {
    fake.on(`POST ${INPAINT}`, imageReply(PNG, 'image/png'));

    await image('ultra').doEdit!(editRequest(), ctx);

    const form = await formOf(fake.requests[0]);
    expect(form.has('image')).to.equal(true);
    expect(form.has('mask')).to.equal(false);
    expect(form.has('aspect_ratio')).to.equal(false);
  });

  it('refuses to edit several images at once, without calling Stability', async () => {
    const err = await rejectionOf(image().doEdit!(editRequest({ images: [editRequest().images[0], editRequest().images[0]] }), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.param).to.equal('image');
    expect(fake.requests).to.have.length(0);
  });

  it('reports a 429 as rate limited with the Retry-After delay', async () => {
    fake.on(`POST ${CORE}`, { status: 429, headers: { 'retry-after': '60' }, json: rateLimited });

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('rate_limited');
    expect(err.retryAfterMs).to.equal(60_000);
    expectAuthorized(fake.requests[0]);
  });

  it('reports a 500 as a retryable server error', async () => {
    fake.on(`POST ${CORE}`, { status: 500, json: serverError });

    const err = await rejectionOf(image().doGenerate(request(), ctx));

    expect(err.kind).to.equal('server_error');
    expect(err.retryable).to.equal(true);
    expectAuthorized(fake.requests[0]);
  });

  it('gives up on a silent upstream after the call timeout', async () => {
    fake.on(`POST ${CORE}`, { hang: true });

    const err = await rejectionOf(image().doGenerate(request(), { ...ctx, timeoutMs: 150 }));

    expect(err.kind).to.equal('timeout');
    expectAuthorized(fake.requests[0]);
  });

  it('treats an answer that is not an image as a bad response', async () => {
    fake.sequence(`POST ${CORE}`, [
      { json: { image: 'aGVsbG8=', finish_reason: 'SUCCESS', seed: 1 } },
      imageReply(Buffer.alloc(0), 'image/png'),
    ]);

    const jsonAnswer = await rejectionOf(image().doGenerate(request(), ctx));
    const emptyAnswer = await rejectionOf(image().doGenerate(request(), ctx));

    expect([jsonAnswer.kind, emptyAnswer.kind]).to.deep.equal(['bad_response', 'bad_response']);
  });

  it('passes a 400 on as a caller error with Stability\'s message', async () => {
    fake.on(`POST ${CORE}`, { status: 400, json: badRequest });

    const err = await rejectionOf(image().doGenerate(request({ size: undefined, params: { aspect_ratio: '7:1' } }), ctx));

    expect(err.kind).to.equal('caller_error');
    expect(err.status).to.equal(400);
    expect(err.message).to.include('aspect_ratio: must be one of');
    expect((await fieldsOf(fake.requests[0])).aspect_ratio).to.equal('7:1');
  });

  it('is not configured without an API key and then never calls upstream', async () => {
    const provider = createStabilityProvider({ id: 'stability', baseUrl });

    const generate = await rejectionOf(provider.image!('core').doGenerate(request(), ctx));
    const edit = await rejectionOf(provider.image!('core').doEdit!(editRequest(), ctx));

    expect(provider.configured).to.equal(false);
    expect([generate.kind, edit.kind]).to.deep.equal(['not_configured', 'not_configured']);
    expect(fake.requests).to.have.length(0);
  });
});
