/**
 * Our edit masks follow OpenAI's convention: a PNG whose transparent pixels mark what to repaint.
 * Stability reads a mask by brightness instead (white repaints, black keeps), so a transparent-black
 * pixel would mean the opposite. This turns the mask's alpha channel into that grayscale, as a PNG.
 *
 * Only what masks are in practice is read: 8-bit, non-interlaced, gray+alpha or RGBA. Any other file is
 * returned unchanged, on the view that it already is a grayscale mask.
 */
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import type { ImageInputFile } from '../types';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Bytes per pixel of the alpha-bearing 8-bit colour types: 4 is gray+alpha, 6 is RGBA. */
const BYTES_PER_PIXEL: Record<number, number> = { 4: 2, 6: 4 };

export function toStabilityMask(mask: ImageInputFile): ImageInputFile {
  const alpha = readAlpha(mask.data);
  if (!alpha) return mask;
  const strength = Buffer.alloc(alpha.pixels.length);
  for (let i = 0; i < strength.length; i++) strength[i] = 255 - alpha.pixels[i];
  return { data: grayscalePng(alpha.width, alpha.height, strength), filename: mask.filename.replace(/\.[^.]*$/, '') + '.png', mediaType: 'image/png' };
}

interface AlphaPlane {
  width: number;
  height: number;
  /** One alpha byte per pixel, row by row. */
  pixels: Buffer;
}

function readAlpha(png: Buffer): AlphaPlane | null {
  if (png.length < 33 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  let width = 0;
  let height = 0;
  let bytesPerPixel = 0;
  const idat: Buffer[] = [];
  for (let offset = 8; offset + 12 <= png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('ascii', offset + 4, offset + 8);
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      const [bitDepth, colorType, , , interlace] = data.subarray(8, 13);
      if (bitDepth !== 8 || interlace !== 0 || !BYTES_PER_PIXEL[colorType]) return null;
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      bytesPerPixel = BYTES_PER_PIXEL[colorType];
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    offset += 12 + length;
  }
  if (!bytesPerPixel || width === 0 || height === 0 || idat.length === 0) return null;
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat));
  } catch {
    return null;
  }
  const stride = width * bytesPerPixel;
  if (raw.length < height * (stride + 1)) return null;
  const pixels = Buffer.alloc(width * height);
  let previous: Buffer = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const start = y * (stride + 1);
    const row = unfilter(raw[start], raw.subarray(start + 1, start + 1 + stride), previous, bytesPerPixel);
    if (!row) return null;
    for (let x = 0; x < width; x++) pixels[y * width + x] = row[x * bytesPerPixel + bytesPerPixel - 1];
    previous = row;
  }
  return { width, height, pixels };
}

/** Reverses one scanline's PNG filter (none, sub, up, average, paeth). */
function unfilter(filter: number, line: Buffer, previous: Buffer, bpp: number): Buffer | null {
  const row = Buffer.alloc(line.length);
  for (let i = 0; i < line.length; i++) {
    const left = i >= bpp ? row[i - bpp] : 0;
    const up = previous[i];
    const upLeft = i >= bpp ? previous[i - bpp] : 0;
    let predictor: number;
    switch (filter) {
      case 0: predictor = 0; break;
      case 1: predictor = left; break;
      case 2: predictor = up; break;
      case 3: predictor = (left + up) >> 1; break;
      case 4: predictor = paeth(left, up, upLeft); break;
      default: return null;
    }
    row[i] = (line[i] + predictor) & 0xff;
  }
  return row;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function grayscalePng(width: number, height: number, pixels: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // grayscale
  const raw = Buffer.alloc(height * (width + 1));
  for (let y = 0; y < height; y++) pixels.copy(raw, y * (width + 1) + 1, y * width, (y + 1) * width);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}
