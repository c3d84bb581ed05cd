import { expect } from 'chai';
import { toStabilityMask } from '../../../providers/stability/mask';
import { decodeGrayPng, encodePng } from './png';

describe('providers/stability mask', () => {
  it('turns transparent pixels white and opaque ones black, whatever their colour', () => {
    // Left half transparent (to repaint), right half opaque; colours chosen to mislead a brightness reader.
    const png = encodePng(4, 2, 6, (x) => (x < 2 ? [0, 0, 0, 0] : [255, 255, 255, 255]));

    const mask = toStabilityMask({ data: png, filename: 'mask.png', mediaType: 'image/png' });

    expect(mask.mediaType).to.equal('image/png');
    expect(decodeGrayPng(mask.data)).to.deep.equal({ width: 4, height: 2, colorType: 0, pixels: [255, 255, 0, 0, 255, 255, 0, 0] });
  });

  it('keeps partial transparency as partial strength and reads every PNG row filter', () => {
    const alphaAt = (x: number, y: number) => (x * 40 + y * 17) % 256;
    const png = encodePng(6, 5, 6, (x, y) => [x * 30, y * 50, 90, alphaAt(x, y)], [0, 1, 2, 3, 4]);

    const mask = toStabilityMask({ data: png, filename: 'mask.png', mediaType: 'image/png' });

    const expected = Array.from({ length: 30 }, (_, i) => 255 - alphaAt(i % 6, Math.floor(i / 6)));
    expect(decodeGrayPng(mask.data).pixels).to.deep.equal(expected);
  });

  it('reads gray+alpha masks too', () => {
    const png = encodePng(2, 1, 4, (x) => [200, x === 0 ? 0 : 255], [4]);

    const mask = toStabilityMask({ data: png, filename: 'mask.webp', mediaType: 'image/png' });

    expect(decodeGrayPng(mask.data).pixels).to.deep.equal([255, 0]);
    expect(mask.filename).to.equal('mask.png');
  });

  it('leaves a file it cannot read as alpha unchanged', () => {
    const jpeg = { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]), filename: 'mask.jpg', mediaType: 'image/jpeg' };

    expect(toStabilityMask(jpeg)).to.equal(jpeg);
  });
});
