import { expect } from 'chai';
import sharp from 'sharp';
import { ctx, simulated, upstreamFailure } from './support';

describe('simulated provider: images', () => {
  const images = simulated().image!('sim-image');

  it('generates n real PNGs at the requested size with a revised prompt', async () => {
    const result = await images.doGenerate({ prompt: 'a lighthouse at dusk', n: 2, size: '512x256', params: {} }, ctx());
    expect(result.images).to.have.length(2);
    for (const image of result.images) {
      expect(image.mediaType).to.equal('image/png');
      expect(await sharp(image.data!).metadata()).to.include({ format: 'png', width: 512, height: 256 });
      expect(image.revisedPrompt).to.include('a lighthouse at dusk');
    }
    expect(result.images[0].data!.equals(result.images[1].data!)).to.equal(false);
    const again = await images.doGenerate({ prompt: 'a lighthouse at dusk', n: 2, size: '512x256', params: {} }, ctx());
    expect(again.images[1].data!.equals(result.images[1].data!)).to.equal(true);
  });

  it('defaults to 1024x1024 for auto or no size', async () => {
    const result = await images.doGenerate({ prompt: 'x', n: 1, size: 'auto', params: {} }, ctx());
    expect(await sharp(result.images[0].data!).metadata()).to.include({ width: 1024, height: 1024 });
  });

  it('honours output_format, output_compression and a transparent background', async () => {
    const jpeg = await images.doGenerate({ prompt: 'x', n: 1, size: '256x256', params: { output_format: 'jpeg', output_compression: 40 } }, ctx());
    expect(jpeg.images[0].mediaType).to.equal('image/jpeg');
    expect((await sharp(jpeg.images[0].data!).metadata()).format).to.equal('jpeg');
    const webp = await images.doGenerate({ prompt: 'x', n: 1, size: '256x256', params: { output_format: 'webp', background: 'transparent' } }, ctx());
    expect(await sharp(webp.images[0].data!).metadata()).to.include({ format: 'webp', hasAlpha: true });
    const err = await upstreamFailure(() => images.doGenerate({ prompt: 'x', n: 1, params: { output_format: 'jpeg', background: 'transparent' } }, ctx()));
    expect(err.kind).to.equal('caller_error');
  });

  it('changes with the seed parameter', async () => {
    const a = await images.doGenerate({ prompt: 'x', n: 1, size: '64x64', params: { seed: 1 } }, ctx());
    const b = await images.doGenerate({ prompt: 'x', n: 1, size: '64x64', params: { seed: 2 } }, ctx());
    expect(a.images[0].data!.equals(b.images[0].data!)).to.equal(false);
  });

  it('refuses sizes it cannot make', async () => {
    const err = await upstreamFailure(() => images.doGenerate({ prompt: 'x', n: 1, size: 'huge', params: {} }, ctx()));
    expect(err.status).to.equal(400);
  });

  it('edits: the result has the input image size and format asked for', async () => {
    const source = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#336699' } }).png().toBuffer();
    const result = await images.doEdit!({ prompt: 'make it warmer', n: 1, params: { output_format: 'webp' }, images: [{ data: source, filename: 'in.png', mediaType: 'image/png' }] }, ctx());
    expect(result.images[0].mediaType).to.equal('image/webp');
    expect(await sharp(result.images[0].data!).metadata()).to.include({ width: 200, height: 100 });
    const before = await sharp(source).raw().toBuffer();
    const after = await sharp(result.images[0].data!).removeAlpha().raw().toBuffer();
    expect(Math.abs(after[0] - before[0]) + Math.abs(after[1] - before[1]) + Math.abs(after[2] - before[2])).to.be.greaterThan(10);
  });

  it('edits: refuses an input that is not an image', async () => {
    const err = await upstreamFailure(() => images.doEdit!({ prompt: 'x', n: 1, params: {}, images: [{ data: Buffer.from('not an image'), filename: 'x.png', mediaType: 'image/png' }] }, ctx()));
    expect(err.kind).to.equal('caller_error');
  });
});
