import { expect } from 'chai';
import sharp from 'sharp';
import { editImage, generateImage, sniffImageSize } from '../../../simulator/media/image';

describe('simulated media: images', () => {
  it('encodes PNG: signature, IHDR with the requested size, RGBA when transparent', async () => {
    const png = await generateImage({ width: 300, height: 200, seed: 1, format: 'png' });
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).to.equal(true);
    expect(png.toString('latin1', 12, 16)).to.equal('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).to.deep.equal([300, 200]);
    const transparent = await generateImage({ width: 64, height: 64, seed: 1, format: 'png', transparent: true });
    expect(transparent[25]).to.equal(6); // colour type: truecolour with alpha
    const stats = await sharp(transparent).stats();
    expect(stats.channels[3].min).to.equal(0);
  });

  it('encodes JPEG: SOI, then a SOF marker with the requested size; quality changes the bytes', async () => {
    const jpeg = await generateImage({ width: 320, height: 240, seed: 2, format: 'jpeg', compression: 80 });
    expect(jpeg[0]).to.equal(0xff);
    expect(jpeg[1]).to.equal(0xd8);
    expect(jpeg.subarray(-2).equals(Buffer.from([0xff, 0xd9]))).to.equal(true);
    expect(sniffImageSize(jpeg)).to.deep.equal({ width: 320, height: 240, mediaType: 'image/jpeg' });
    const low = await generateImage({ width: 320, height: 240, seed: 2, format: 'jpeg', compression: 10 });
    expect(low.length).to.be.lessThan(jpeg.length);
  });

  it('encodes WebP: RIFF/WEBP with a VP8 chunk of the requested size, alpha kept when transparent', async () => {
    const webp = await generateImage({ width: 200, height: 120, seed: 3, format: 'webp', compression: 75 });
    expect(webp.toString('latin1', 0, 4)).to.equal('RIFF');
    expect(webp.readUInt32LE(4)).to.equal(webp.length - 8);
    expect(webp.toString('latin1', 8, 12)).to.equal('WEBP');
    expect(webp.toString('latin1', 12, 15)).to.equal('VP8');
    expect(sniffImageSize(webp)).to.deep.equal({ width: 200, height: 120, mediaType: 'image/webp' });
    const transparent = await generateImage({ width: 64, height: 64, seed: 3, format: 'webp', transparent: true });
    expect((await sharp(transparent).metadata()).hasAlpha).to.equal(true);
  });

  it('is deterministic per seed', async () => {
    const a = await generateImage({ width: 128, height: 128, seed: 9, format: 'png' });
    const b = await generateImage({ width: 128, height: 128, seed: 9, format: 'png' });
    const c = await generateImage({ width: 128, height: 128, seed: 10, format: 'png' });
    expect(a.equals(b)).to.equal(true);
    expect(a.equals(c)).to.equal(false);
  });

  it('edits keep the input size, and a mask keeps its opaque area untouched', async () => {
    const source = await generateImage({ width: 96, height: 64, seed: 4, format: 'png' });
    // Transparent (editable) left half, opaque right half.
    const maskPixels = Buffer.alloc(96 * 64 * 4, 255);
    for (let y = 0; y < 64; y++) for (let x = 0; x < 48; x++) maskPixels[(y * 96 + x) * 4 + 3] = 0;
    const mask = await sharp(maskPixels, { raw: { width: 96, height: 64, channels: 4 } }).png().toBuffer();
    const edited = await editImage({ image: source, mask, seed: 5, format: 'png' });
    expect([edited.width, edited.height]).to.deep.equal([96, 64]);
    const before = await sharp(source).ensureAlpha().raw().toBuffer();
    const after = await sharp(edited.data).ensureAlpha().raw().toBuffer();
    const pixel = (buf: Buffer, x: number, y: number) => Array.from(buf.subarray((y * 96 + x) * 4, (y * 96 + x) * 4 + 4));
    expect(pixel(after, 80, 30)).to.deep.equal(pixel(before, 80, 30));
    expect(pixel(after, 10, 30)).to.not.deep.equal(pixel(before, 10, 30));
  });
});
