/**
 * Test-only PNG helpers: build 8-bit PNGs with chosen filters, and read back 8-bit grayscale ones.
 */
import { crc32, deflateSync, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A PNG of `colorType` 6 (RGBA) or 4 (gray+alpha) from per-pixel channel values; row y uses filter
 * `filters[y % filters.length]`, so every PNG filter can be exercised.
 */
export function encodePng(width: number, height: number, colorType: 4 | 6, pixel: (x: number, y: number) => number[], filters: number[] = [0]): Buffer {
  const bpp = colorType === 6 ? 4 : 2;
  const stride = width * bpp;
  const rows: Buffer[] = [];
  let previous: Buffer = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const row = Buffer.from(Array.from({ length: width }, (_, x) => pixel(x, y)).flat());
    const filter = filters[y % filters.length];
    const filtered = Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const left = i >= bpp ? row[i - bpp] : 0;
      const up = previous[i];
      const upLeft = i >= bpp ? previous[i - bpp] : 0;
      const predictor = [0, left, up, (left + up) >> 1, paeth(left, up, upLeft)][filter];
      filtered[i] = (row[i] - predictor) & 0xff;
    }
    rows.push(Buffer.from([filter]), filtered);
    previous = row;
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = colorType;
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

/** The pixel values of an unfiltered 8-bit grayscale PNG, with its size. */
export function decodeGrayPng(png: Buffer): { width: number; height: number; colorType: number; pixels: number[] } {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const colorType = png[25];
  const idat: Buffer[] = [];
  for (let offset = 8; offset < png.length;) {
    const length = png.readUInt32BE(offset);
    if (png.toString('ascii', offset + 4, offset + 8) === 'IDAT') idat.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const pixels: number[] = [];
  for (let y = 0; y < height; y++) pixels.push(...raw.subarray(y * (width + 1) + 1, (y + 1) * (width + 1)));
  return { width, height, colorType, pixels };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}
