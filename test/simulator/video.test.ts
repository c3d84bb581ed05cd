import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { readAcceptedSubmissions } from '../../simulator';
import { readBoxes } from '../../simulator/media/mp4';
import { videoSize } from '../../simulator/video';
import type { VideoSubmitRequest } from '../../providers/types';
import { ctx, simulated, upstreamFailure } from './support';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => { now += ms; } };
}

const request: VideoSubmitRequest = { prompt: 'a paper boat on a pond', durationSeconds: 2, n: 1, params: {} };

function tkhdSize(mp4: Buffer): [number, number] {
  const moov = readBoxes(mp4).find((b) => b.type === 'moov')!;
  const trak = readBoxes(mp4, moov.bodyStart, moov.start + moov.size).find((b) => b.type === 'trak')!;
  const tkhd = readBoxes(mp4, trak.bodyStart, trak.start + trak.size).find((b) => b.type === 'tkhd')!;
  return [mp4.readUInt32BE(tkhd.bodyStart + 76) / 65536, mp4.readUInt32BE(tkhd.bodyStart + 80) / 65536];
}

describe('simulated provider: video', () => {
  it('gives the first job back to a submission repeated under the same idempotency key, across provider instances with a state directory', async () => {
    const time = clock();
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sim-video-test-'));
    try {
      const first = simulated({ now: time.now, stateDir }).video!('sim-video');
      const { operationId } = await first.doSubmit(request, ctx({ idempotencyKey: 'job-1:0' }));
      time.advance(500);
      expect((await first.doSubmit(request, ctx({ idempotencyKey: 'job-1:0' }))).operationId).to.equal(operationId);
      // Another process (a new provider instance) with the same state directory remembers it too.
      const restarted = simulated({ now: time.now, stateDir }).video!('sim-video');
      expect((await restarted.doSubmit(request, ctx({ idempotencyKey: 'job-1:0' }))).operationId).to.equal(operationId);
      const other = await restarted.doSubmit(request, ctx({ idempotencyKey: 'job-2:0' }));
      expect(other.operationId).to.not.equal(operationId);
      expect(readAcceptedSubmissions(stateDir)).to.deep.equal([{ key: 'job-1:0', operationId }, { key: 'job-2:0', operationId: other.operationId }]);
      // Without a key every submission is a new job, and none is remembered.
      const unnamed = await restarted.doSubmit(request, ctx());
      time.advance(1);
      expect((await restarted.doSubmit(request, ctx())).operationId).to.not.equal(unnamed.operationId);
      expect(readAcceptedSubmissions(stateDir)).to.have.length(2);
    } finally {
      fs.rmSync(stateDir, { recursive: true, force: true });
    }
  });

  it('reports processing with growing progress, then succeeds with an MP4 inline', async () => {
    const time = clock();
    const video = simulated({ now: time.now, videoReadyMs: 3000 }).video!('sim-video');
    const { operationId } = await video.doSubmit(request, ctx());
    expect(await video.doPoll(operationId, ctx())).to.deep.equal({ status: 'processing', progress: 0 });
    time.advance(1500);
    expect(await video.doPoll(operationId, ctx())).to.deep.equal({ status: 'processing', progress: 50 });
    time.advance(1500);
    const done = await video.doPoll(operationId, ctx());
    expect(done.status).to.equal('succeeded');
    if (done.status !== 'succeeded') return;
    expect(done.videos).to.have.length(1);
    const [clip] = done.videos;
    expect(clip.mediaType).to.equal('video/mp4');
    expect(clip.durationSeconds).to.equal(2);
    expect(readBoxes(clip.data!).map((b) => b.type)).to.deep.equal(['ftyp', 'moov', 'mdat']);
    expect(tkhdSize(clip.data!)).to.deep.equal([256, 144]);
  });

  it('keeps the job in its operation id, so another process (or a restart) can poll it', async () => {
    const time = clock();
    const { operationId } = await simulated({ now: time.now, videoReadyMs: 100 }).video!('sim-video').doSubmit({ ...request, n: 2 }, ctx());
    time.advance(100);
    const elsewhere = simulated({ now: time.now, videoReadyMs: 99_999 }).video!('sim-video');
    const done = await elsewhere.doPoll(operationId, ctx());
    expect(done.status).to.equal('succeeded');
    if (done.status === 'succeeded') {
      expect(done.videos).to.have.length(2);
      expect(done.videos[0].data!.equals(done.videos[1].data!)).to.equal(false);
    }
  });

  it('takes the processing delay from the x-sim-video-ms header', async () => {
    const time = clock();
    const video = simulated({ now: time.now }, { 'x-sim-video-ms': '200' }).video!('sim-video');
    const { operationId } = await video.doSubmit(request, ctx());
    time.advance(100);
    expect(await video.doPoll(operationId, ctx())).to.deep.equal({ status: 'processing', progress: 50 });
    time.advance(100);
    expect((await video.doPoll(operationId, ctx())).status).to.equal('succeeded');
  });

  it('renders the requested resolution and aspect ratio', async () => {
    const time = clock();
    const video = simulated({ now: time.now, videoReadyMs: 0 }).video!('sim-video');
    const { operationId } = await video.doSubmit({ ...request, durationSeconds: 1, resolution: '360p', aspectRatio: '9:16' }, ctx());
    const done = await video.doPoll(operationId, ctx());
    if (done.status !== 'succeeded') expect.fail(done.status);
    expect(tkhdSize(done.videos[0].data!)).to.deep.equal([360, 640]);
  });

  it('maps resolutions and aspect ratios to frame sizes', () => {
    const reject = (m: string) => new Error(m);
    expect(videoSize(undefined, undefined, reject)).to.deep.equal({ width: 256, height: 144 });
    expect(videoSize(undefined, '1:1', reject)).to.deep.equal({ width: 144, height: 144 });
    expect(videoSize('480p', '16:9', reject)).to.deep.equal({ width: 854, height: 480 });
    expect(videoSize('720p', '9:16', reject)).to.deep.equal({ width: 720, height: 1280 });
    expect(videoSize('320x180', undefined, reject)).to.deep.equal({ width: 320, height: 180 });
    expect(() => videoSize('4320p', undefined, reject)).to.throw();
  });

  it('uses a reference image as the background', async () => {
    const time = clock();
    const video = simulated({ now: time.now, videoReadyMs: 0 }).video!('sim-video');
    const image = await sharp({ create: { width: 64, height: 36, channels: 3, background: '#ff0000' } }).png().toBuffer();
    const plain = await video.doPoll((await video.doSubmit(request, ctx())).operationId, ctx());
    const withImage = await video.doPoll((await video.doSubmit({ ...request, image: { data: image, mediaType: 'image/png' } }, ctx())).operationId, ctx());
    if (plain.status !== 'succeeded' || withImage.status !== 'succeeded') expect.fail('not done');
    expect(plain.videos[0].data!.equals(withImage.videos[0].data!)).to.equal(false);
  });

  it('ends failed on -fail variants (after accepting the job)', async () => {
    const time = clock();
    const video = simulated({ now: time.now, videoReadyMs: 10 }).video!('sim-video-fail');
    const { operationId } = await video.doSubmit(request, ctx());
    expect((await video.doPoll(operationId, ctx())).status).to.equal('processing');
    time.advance(10);
    const failed = await video.doPoll(operationId, ctx());
    expect(failed).to.include({ status: 'failed', retryable: true });
    const rejected = simulated({ now: time.now, videoReadyMs: 0 }).video!('sim-video-fail-400');
    expect(await rejected.doPoll((await rejected.doSubmit(request, ctx())).operationId, ctx())).to.include({ status: 'failed', retryable: false });
  });

  it('answers 404 for an operation it never issued', async () => {
    const err = await upstreamFailure(() => simulated().video!('sim-video').doPoll('simvid_bm90LWpzb24', ctx()));
    expect(err.kind).to.equal('caller_error');
    expect(err.upstreamStatus).to.equal(404);
  });

  it('applies the request directive to the submission', async () => {
    const err = await upstreamFailure(() => simulated().video!('sim-video').doSubmit(request, ctx({ simulate: { failure: '503' } })));
    expect(err.kind).to.equal('server_error');
  });
});
