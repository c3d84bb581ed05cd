/**
 * Deterministic pictures: a seeded gradient with soft discs and stripes, rendered here as RGBA and
 * encoded by sharp (libvips) as PNG, JPEG or WebP. Edits decode the input with sharp, tint it, and keep
 * the untouched parts where a mask says so.
 */
import sharp from 'sharp';
import { prng } from '../seed';

export type ImageFormat = 'png' | 'jpeg' | 'webp';

export const IMAGE_MEDIA_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

export interface EncodeOptions {
  format: ImageFormat;
  /** 0..100, as OpenAI's `output_compression`: the JPEG/WebP quality (PNG is lossless and ignores it). */
  compression?: number;
}

export interface RasterSpec {
  width: number;
  height: number;
  seed: number;
  /** Leave the background transparent (PNG/WebP keep the alpha channel). */
  transparent?: boolean;
}

export function renderRaster(spec: RasterSpec): Buffer {
  const { width, height } = spec;
  const random = prng(spec.seed);
  const from = [random() * 255, random() * 255, random() * 255];
  const to = [random() * 255, random() * 255, random() * 255];
  const angle = random() * Math.PI * 2;
  const dx = Math.cos(angle);
  const dy = Math.sin(angle);
  const discs = Array.from({ length: 3 + Math.floor(random() * 4) }, () => ({
    x: random() * width,
    y: random() * height,
    radius: (0.08 + random() * 0.22) * Math.min(width, height),
    color: [random() * 255, random() * 255, random() * 255],
  }));
  const stripePeriod = 12 + Math.floor(random() * 36);
  const out = Buffer.alloc(width * height * 4);
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const t = Math.min(1, Math.max(0, 0.5 + ((col / width - 0.5) * dx + (row / height - 0.5) * dy)));
      let r = from[0] + (to[0] - from[0]) * t;
      let g = from[1] + (to[1] - from[1]) * t;
      let b = from[2] + (to[2] - from[2]) * t;
      let alpha = spec.transparent ? 0 : 1;
      for (const disc of discs) {
        const distance = Math.hypot(col - disc.x, row - disc.y);
        const coverage = Math.min(1, Math.max(0, (disc.radius - distance) / 2));
        if (coverage > 0) {
          r += (disc.color[0] - r) * coverage * 0.85;
          g += (disc.color[1] - g) * coverage * 0.85;
          b += (disc.color[2] - b) * coverage * 0.85;
          alpha = Math.max(alpha, coverage);
        }
      }
      const stripe = ((col + row) % stripePeriod) < stripePeriod / 6 ? 0.92 : 1;
      const o = (row * width + col) * 4;
      out[o] = Math.round(r * stripe);
      out[o + 1] = Math.round(g * stripe);
      out[o + 2] = Math.round(b * stripe);
      out[o + 3] = Math.round(alpha * 255);
    }
  }
  return out;
}

/** Encodes RGBA pixels; JPEG flattens any transparency onto white. */
export async function encodeRgba(rgba: Buffer, width: number, height: number, options: EncodeOptions): Promise<Buffer> {
  const image = sharp(rgba, { raw: { width, height, channels: 4 } });
  const quality = Math.min(100, Math.max(1, Math.round(options.compression ?? 90)));
  switch (options.format) {
    case 'png': return image.png({ compressionLevel: 6 }).toBuffer();
    case 'jpeg': return image.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
    case 'webp': return image.webp({ quality, alphaQuality: 100 }).toBuffer();
  }
}

export async function generateImage(spec: RasterSpec & EncodeOptions): Promise<Buffer> {
  return encodeRgba(renderRaster(spec), spec.width, spec.height, spec);
}

export interface EditSpec extends EncodeOptions {
  image: Buffer;
  /** Where the mask is transparent the image is edited; elsewhere it is kept (OpenAI's convention). */
  mask?: Buffer;
  seed: number;
  /** Output size (the input's when absent). */
  size?: { width: number; height: number };
}

export interface EditedImage {
  data: Buffer;
  width: number;
  height: number;
}

/** Tints the input towards a seeded colour (inside the mask's transparent area only, when given). */
export async function editImage(spec: EditSpec): Promise<EditedImage> {
  const source = sharp(spec.image).ensureAlpha();
  if (spec.size) source.resize(spec.size.width, spec.size.height, { fit: 'fill' });
  const { data: pixels, info } = await source.raw().toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  let editable: Buffer | null = null;
  if (spec.mask) {
    const mask = await sharp(spec.mask).ensureAlpha().resize(width, height, { fit: 'fill' }).raw().toBuffer();
    editable = Buffer.alloc(width * height);
    for (let i = 0; i < width * height; i++) editable[i] = mask[i * 4 + 3] < 128 ? 1 : 0;
  }
  const random = prng(spec.seed);
  const tint = [random() * 255, random() * 255, random() * 255];
  const out = Buffer.from(pixels);
  for (let i = 0; i < width * height; i++) {
    if (editable && !editable[i]) continue;
    for (let c = 0; c < 3; c++) out[i * 4 + c] = Math.round(out[i * 4 + c] * 0.55 + tint[c] * 0.45);
    out[i * 4 + 3] = Math.max(out[i * 4 + 3], 255 * 0.6);
  }
  return { data: await encodeRgba(out, width, height, spec), width, height };
}

/** Width and height from a PNG, JPEG, GIF or WebP header, without decoding; null if unknown. */
export function sniffImageSize(data: Buffer): { width: number; height: number; mediaType: string } | null {
  if (data.length >= 24 && data.readUInt32BE(0) === 0x89504e47 && data.toString('latin1', 12, 16) === 'IHDR') {
    return { width: data.readUInt32BE(16), height: data.readUInt32BE(20), mediaType: 'image/png' };
  }
  if (data.length >= 10 && data.toString('latin1', 0, 3) === 'GIF') {
    return { width: data.readUInt16LE(6), height: data.readUInt16LE(8), mediaType: 'image/gif' };
  }
  if (data.length >= 30 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = data.toString('latin1', 12, 16);
    if (chunk === 'VP8X') return { width: 1 + data.readUIntLE(24, 3), height: 1 + data.readUIntLE(27, 3), mediaType: 'image/webp' };
    if (chunk === 'VP8 ') return { width: data.readUInt16LE(26) & 0x3fff, height: data.readUInt16LE(28) & 0x3fff, mediaType: 'image/webp' };
    if (chunk === 'VP8L') {
      const bits = data.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1, mediaType: 'image/webp' };
    }
  }
  if (data.length >= 4 && data[0] === 0xff && data[1] === 0xd8) {
    let offset = 2;
    while (offset + 9 < data.length) {
      if (data[offset] !== 0xff) { offset++; continue; }
      const marker = data[offset + 1];
      if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0xff) { offset += marker === 0xff ? 1 : 2; continue; }
      const length = data.readUInt16BE(offset + 2);
      const isStartOfFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isStartOfFrame) return { width: data.readUInt16BE(offset + 7), height: data.readUInt16BE(offset + 5), mediaType: 'image/jpeg' };
      offset += 2 + length;
    }
  }
  return null;
}
