import { expect } from 'chai';
import b64Images from './fixtures/images-b64.json';
import urlImages from './fixtures/images-url.json';
import { API_KEY, ctx, expectUpstreamError, useFakeOpenAI } from './harness';
import { parseMultipart } from './multipart';

describe('openai-compatible images', () => {
  const { upstream, provider } = useFakeOpenAI();
  const png = Buffer.from(b64Images.data[0].b64_json, 'base64');

  describe('generate', () => {
    const route = 'POST /v1/images/generations';

    it('decodes b64_json images and reports token usage, passing every param through by name', async () => {
      upstream.on(route, { json: b64Images });
      const params = { quality: 'high', background: 'opaque', output_format: 'png', moderation: 'low' };

      const result = await provider().image!('gpt-image-1').doGenerate({ prompt: 'A sea otter', n: 1, size: '1024x1024', params }, ctx);

      expect(result.images).to.have.length(1);
      expect(result.images[0].data!.equals(png)).to.equal(true);
      expect(result.images[0].mediaType).to.equal('image/png');
      expect(result.usage).to.deep.equal({ inputTokens: 50, outputTokens: 4160, imageInputTokens: 0 });
      expect(result.reported).to.deep.equal({ size: '1024x1024', quality: 'high', background: 'opaque', outputFormat: 'png' });
      const [sent] = upstream.received(route);
      expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
      expect(sent.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'A sea otter', n: 1, size: '1024x1024', ...params });
    });

    it('returns provider URLs with the revised prompt', async () => {
      upstream.on(route, { json: urlImages });

      const result = await provider().image!('dall-e-3').doGenerate({ prompt: 'A sea otter', n: 1, params: { style: 'vivid', response_format: 'url' } }, ctx);

      expect(result).to.deep.equal({
        images: [{ url: urlImages.data[0].url, mediaType: 'image/png', revisedPrompt: urlImages.data[0].revised_prompt }],
      });
      expect(upstream.received(route)[0].json).to.deep.equal({ model: 'dall-e-3', prompt: 'A sea otter', n: 1, style: 'vivid', response_format: 'url' });
    });

    it('labels images with the output format the host reports', async () => {
      upstream.on(route, { json: { ...b64Images, output_format: 'webp' } });

      const result = await provider().image!('gpt-image-1').doGenerate({ prompt: 'p', n: 1, params: { output_format: 'webp', output_compression: 80 } }, ctx);

      expect(result.images[0].mediaType).to.equal('image/webp');
    });

    it('never asks for a streamed answer, which this adapter does not read', async () => {
      upstream.on(route, { json: b64Images });

      await provider().image!('gpt-image-1').doGenerate({ prompt: 'p', n: 1, params: { stream: true, partial_images: 2 } }, ctx);

      expect(upstream.received(route)[0].json).to.deep.equal({ model: 'gpt-image-1', prompt: 'p', n: 1 });
    });

    it('rejects an answer without images as bad_response', async () => {
      upstream.on(route, { json: { created: 1713833628, data: [{ revised_prompt: 'nothing' }] } });

      await expectUpstreamError(provider().image!('dall-e-3').doGenerate({ prompt: 'p', n: 1, params: {} }, ctx), 'bad_response');
    });
  });

  describe('edit', () => {
    const route = 'POST /v1/images/edits';
    const image = { data: png, filename: 'room.png', mediaType: 'image/png' };

    it('uploads one image and a mask as multipart fields with the params', async () => {
      upstream.on(route, { json: b64Images });
      const mask = { data: Buffer.from('mask-bytes'), filename: 'mask.png', mediaType: 'image/png' };

      const result = await provider().image!('gpt-image-1').doEdit!({ prompt: 'Add a plant', n: 2, size: '1024x1536', params: { quality: 'low', input_fidelity: 'high' }, images: [image], mask }, ctx);

      expect(result.images[0].data!.equals(png)).to.equal(true);
      const [sent] = upstream.received(route);
      expect(sent.headers.authorization).to.equal(`Bearer ${API_KEY}`);
      expect(sent.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
      const form = await parseMultipart(sent);
      expect(form.fields).to.deep.equal({ model: 'gpt-image-1', prompt: 'Add a plant', n: '2', size: '1024x1536', quality: 'low', input_fidelity: 'high' });
      expect(form.files.map(({ field, filename, mediaType }) => ({ field, filename, mediaType }))).to.deep.equal([
        { field: 'image', filename: 'room.png', mediaType: 'image/png' },
        { field: 'mask', filename: 'mask.png', mediaType: 'image/png' },
      ]);
      expect(form.files[0].data.equals(png)).to.equal(true);
      expect(form.files[1].data.toString()).to.equal('mask-bytes');
    });

    it('uploads several images as image[]', async () => {
      upstream.on(route, { json: b64Images });
      const second = { data: Buffer.from('jpeg-bytes'), filename: 'lamp.jpg', mediaType: 'image/jpeg' };

      await provider().image!('gpt-image-1').doEdit!({ prompt: 'Combine', n: 1, params: {}, images: [image, second] }, ctx);

      const form = await parseMultipart(upstream.received(route)[0]);
      expect(form.files.map(({ field, filename, mediaType }) => ({ field, filename, mediaType }))).to.deep.equal([
        { field: 'image[]', filename: 'room.png', mediaType: 'image/png' },
        { field: 'image[]', filename: 'lamp.jpg', mediaType: 'image/jpeg' },
      ]);
      expect(form.fields).to.deep.equal({ model: 'gpt-image-1', prompt: 'Combine', n: '1' });
    });
  });
});
