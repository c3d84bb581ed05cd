/**
 * Renders the simulated video: a seeded gradient (or the caller's reference image) with a bouncing
 * square and a progress bar along the bottom, encoded as lossless H.264 in an MP4.
 */
import { prng } from '../seed';
import { codedSize, encodeH264, YuvFrame } from './h264';
import { muxMp4 } from './mp4';

export interface VideoSpec {
  width: number;
  height: number;
  fps: number;
  seconds: number;
  seed: number;
  /** Optional background, RGB bytes of exactly width x height (image-to-video). */
  backgroundRgb?: Uint8Array;
}

export interface RenderedVideo {
  data: Buffer;
  frames: number;
  seconds: number;
}

export function renderVideo(spec: VideoSpec): RenderedVideo {
  const frameCount = Math.max(1, Math.round(spec.seconds * spec.fps));
  const coded = codedSize(spec.width, spec.height);
  const random = prng(spec.seed);
  const background = spec.backgroundRgb
    ? yuvFromRgb(spec.backgroundRgb, spec.width, spec.height, coded.width, coded.height)
    : gradient(coded.width, coded.height, randomColor(random), randomColor(random));
  const squareColor = rgbToYuv(randomColor(random));
  const barColor = rgbToYuv([240, 240, 240]);
  const side = Math.max(8, Math.round(Math.min(spec.width, spec.height) / 5) & ~1);
  const barHeight = Math.max(2, Math.round(spec.height / 36) & ~1);
  const speedX = (spec.width - side) / Math.max(1, spec.fps * (1.5 + random()));
  const speedY = (spec.height - side - barHeight) / Math.max(1, spec.fps * (1 + random()));
  const frames: YuvFrame[] = [];
  for (let index = 0; index < frameCount; index++) {
    const frame = { y: background.y.slice(), cb: background.cb.slice(), cr: background.cr.slice() };
    const x = bounce(index * speedX, spec.width - side);
    const y = bounce(index * speedY, spec.height - side - barHeight);
    fillRect(frame, coded.width, x, y, side, side, squareColor);
    const barWidth = Math.round((spec.width * (index + 1)) / frameCount) & ~1;
    fillRect(frame, coded.width, 0, spec.height - barHeight, barWidth, barHeight, barColor);
    frames.push(frame);
  }
  const encoded = encodeH264({ width: spec.width, height: spec.height, fps: spec.fps }, frames);
  return { data: muxMp4({ width: spec.width, height: spec.height, fps: spec.fps, encoded }), frames: frameCount, seconds: frameCount / spec.fps };
}

/** Position moving back and forth over [0, range], on even pixels (so chroma stays aligned). */
function bounce(distance: number, range: number): number {
  if (range <= 0) return 0;
  const period = 2 * range;
  const phase = distance % period;
  return Math.round(phase <= range ? phase : period - phase) & ~1;
}

type Rgb = [number, number, number];
type Yuv = [number, number, number];

function randomColor(random: () => number): Rgb {
  return [Math.floor(random() * 256), Math.floor(random() * 256), Math.floor(random() * 256)];
}

/** BT.601, limited range. */
function rgbToYuv([r, g, b]: Rgb | [number, number, number]): Yuv {
  return [
    Math.round(16 + (65.738 * r + 129.057 * g + 25.064 * b) / 256),
    Math.round(128 + (-37.945 * r - 74.494 * g + 112.439 * b) / 256),
    Math.round(128 + (112.439 * r - 94.154 * g - 18.285 * b) / 256),
  ];
}

function gradient(width: number, height: number, from: Rgb, to: Rgb): YuvFrame {
  const frame = { y: new Uint8Array(width * height), cb: new Uint8Array((width * height) / 4), cr: new Uint8Array((width * height) / 4) };
  for (let row = 0; row < height; row++) {
    for (let col = 0; col < width; col++) {
      const t = (col / width + row / height) / 2;
      const [y, cb, cr] = rgbToYuv([from[0] + (to[0] - from[0]) * t, from[1] + (to[1] - from[1]) * t, from[2] + (to[2] - from[2]) * t]);
      frame.y[row * width + col] = y;
      if (row % 2 === 0 && col % 2 === 0) {
        frame.cb[(row / 2) * (width / 2) + col / 2] = cb;
        frame.cr[(row / 2) * (width / 2) + col / 2] = cr;
      }
    }
  }
  return frame;
}

function yuvFromRgb(rgb: Uint8Array, width: number, height: number, codedWidth: number, codedHeight: number): YuvFrame {
  const frame = { y: new Uint8Array(codedWidth * codedHeight), cb: new Uint8Array((codedWidth * codedHeight) / 4), cr: new Uint8Array((codedWidth * codedHeight) / 4) };
  for (let row = 0; row < codedHeight; row++) {
    for (let col = 0; col < codedWidth; col++) {
      const source = (Math.min(row, height - 1) * width + Math.min(col, width - 1)) * 3;
      const [y, cb, cr] = rgbToYuv([rgb[source], rgb[source + 1], rgb[source + 2]]);
      frame.y[row * codedWidth + col] = y;
      if (row % 2 === 0 && col % 2 === 0) {
        frame.cb[(row / 2) * (codedWidth / 2) + col / 2] = cb;
        frame.cr[(row / 2) * (codedWidth / 2) + col / 2] = cr;
      }
    }
  }
  return frame;
}

function fillRect(frame: YuvFrame, codedWidth: number, x: number, y: number, width: number, height: number, [cy, cb, cr]: Yuv): void {
  for (let row = y; row < y + height; row++) frame.y.fill(cy, row * codedWidth + x, row * codedWidth + x + width);
  const chromaWidth = codedWidth / 2;
  for (let row = y / 2; row < (y + height) / 2; row++) {
    frame.cb.fill(cb, row * chromaWidth + x / 2, row * chromaWidth + (x + width) / 2);
    frame.cr.fill(cr, row * chromaWidth + x / 2, row * chromaWidth + (x + width) / 2);
  }
}
