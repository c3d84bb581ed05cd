import { expect } from 'chai';
import { InvalidRequestError } from '../../../core/errors';
import { createGoogleProvider } from '../../../providers/google';
import { FakeUpstream } from '../../support/fake-upstream';
import geminiImage from './fixtures/gemini-image.json';
import imagenPredict from './fixtures/imagen-predict.json';
import { ctx, upstreamFailure } from './support';

const IMAGEN = 'POST /v1beta/models/imagen-4.0-generate-001:predict';
const GEMINI = 'POST /v1beta/models/gemini-2.5-flash-image:generateContent';

describe('google image adapter', () => {
  const upstream = new FakeUpstream();
  let baseUrl: string;

  before(async () => { baseUrl = await upstream.start(); });
  after(() => upstream.stop());
  afterEach(() => upstream.reset());

  function image(model: string) {
    return createGoogleProvider({ id: 'google', baseUrl, apiKey: 'AIza-test' }).image!(model);
  }

  describe('Imagen (predict)', () => {
    it('sends the prompt and parameters and returns the decoded images', async () => {
      upstream.on(IMAGEN, { json: imagenPredict });

      const result = await image('imagen-4.0-generate-001').doGenerate({
        prompt: 'A lighthouse at dawn',
        n: 2,
        params: { aspect_ratio: '16:9', person_generation: 'allow_adult', negative_prompt: 'fog', seed: 42, image_size: '2K', output_format: 'jpeg', output_compression: 80 },
      }, ctx);

      expect(result.images).to.have.length(2);
      expect(result.images[0].mediaType).to.equal('image/png');
      expect(result.images[0].data!.subarray(1, 4).toString()).to.equal('PNG');
      const [sent] = upstream.received(IMAGEN);
      expect(sent.headers['x-goog-api-key']).to.equal('AIza-test');
      expect(sent.json).to.deep.equal({
        instances: [{ prompt: 'A lighthouse at dawn' }],
        parameters: {
          sampleCount: 2, aspectRatio: '16:9', personGeneration: 'allow_adult', negativePrompt: 'fog', seed: 42, imageSize: '2K',
          outputOptions: { mimeType: 'image/jpeg', compressionQuality: 80 },
        },
      });
    });

    it('derives the aspect ratio from the size when none is given', async () => {
      const cases: Array<[string, string]> = [['1024x1024', '1:1'], ['1792x1024', '16:9'], ['1024x1536', '3:4'], ['1536x1024', '4:3']];
      for (const [size, aspectRatio] of cases) {
        upstream.reset();
        upstream.on(IMAGEN, { json: imagenPredict });
        await image('imagen-4.0-generate-001').doGenerate({ prompt: 'x', n: 1, size, params: {} }, ctx);
        expect(upstream.received(IMAGEN)[0].json.parameters, size).to.deep.equal({ sampleCount: 1, aspectRatio });
      }
    });

    it('reports an answer whose images were all filtered as a caller error', async () => {
      upstream.on(IMAGEN, { json: {} });
      const error = await upstreamFailure(image('imagen-4.0-generate-001').doGenerate({ prompt: 'x', n: 1, params: {} }, ctx));
      expect(error.kind).to.equal('caller_error');
      expect(error.code).to.equal('content_filtered');
      expect(error.retryable).to.equal(false);
    });

    it('passes classified upstream failures through', async () => {
      upstream.on(IMAGEN, { status: 429, headers: { 'retry-after': '5' }, json: { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } } });
      const error = await upstreamFailure(image('imagen-4.0-generate-001').doGenerate({ prompt: 'x', n: 1, params: {} }, ctx));
      expect(error.kind).to.equal('rate_limited');
      expect(error.retryAfterMs).to.equal(5000);
    });
  });

  describe('Gemini image models (generateContent)', () => {
    it('asks for image output with imageConfig, one call per image, and sums usage', async () => {
      upstream.on(GEMINI, { json: geminiImage });

      const result = await image('gemini-2.5-flash-image').doGenerate({ prompt: 'A nano banana dish', n: 2, size: '1536x1024', params: { image_size: '2K' } }, ctx);

      expect(result.images).to.have.length(2);
      expect(result.images[0].mediaType).to.equal('image/png');
      expect(result.images[0].data!.subarray(1, 4).toString()).to.equal('PNG');
      expect(result.usage).to.deep.equal({ inputTokens: 24, outputTokens: 2580 });
      const sent = upstream.received(GEMINI);
      expect(sent).to.have.length(2);
      expect(sent[0].headers['x-goog-api-key']).to.equal('AIza-test');
      expect(sent[0].json).to.deep.equal({
        contents: [{ role: 'user', parts: [{ text: 'A nano banana dish' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2', imageSize: '2K' } },
      });
    });

    it('edits: sends the input images inline after the prompt', async () => {
      upstream.on(GEMINI, { json: geminiImage });
      const png = Buffer.from(geminiImage.candidates[0].content.parts[1].inlineData!.data, 'base64');

      await image('gemini-2.5-flash-image').doEdit!({
        prompt: 'Add a hat', n: 1, params: { aspect_ratio: '1:1' }, images: [{ data: png, filename: 'cat.png', mediaType: 'image/png' }],
      }, ctx);

      expect(upstream.received(GEMINI)[0].json.contents[0].parts).to.deep.equal([
        { text: 'Add a hat' },
        { inlineData: { mimeType: 'image/png', data: png.toString('base64') } },
      ]);
    });

    it('refuses a mask, which these models do not take', async () => {
      const file = { data: Buffer.from('x'), filename: 'a.png', mediaType: 'image/png' };
      const error = await image('gemini-2.5-flash-image').doEdit!({ prompt: 'x', n: 1, params: {}, images: [file], mask: file }, ctx).catch((err) => err);
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(upstream.requests).to.have.length(0);
    });

    it('reports a refusal as a caller error and an answer without an image as a bad response', async () => {
      upstream.on(GEMINI, { json: { candidates: [{ content: { parts: [] }, finishReason: 'IMAGE_SAFETY' }] } });
      expect((await upstreamFailure(image('gemini-2.5-flash-image').doGenerate({ prompt: 'x', n: 1, params: {} }, ctx))).code).to.equal('content_filtered');

      upstream.reset();
      upstream.on(GEMINI, { json: { candidates: [{ content: { parts: [{ text: 'I can only describe it.' }] }, finishReason: 'STOP' }] } });
      const error = await upstreamFailure(image('gemini-2.5-flash-image').doGenerate({ prompt: 'x', n: 1, params: {} }, ctx));
      expect(error.kind).to.equal('bad_response');
      expect(error.message).to.contain('I can only describe it.');
    });
  });
});
