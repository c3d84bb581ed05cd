/** Helpers for video job tests: create a job, poll it to its end, check the MP4 at its signed URL. */
import { expect } from 'chai';
import type { Tenant } from './gateway';
import { findBox, readBoxes, sampleEntries, visualEntryChildren } from './mp4-boxes';

export interface VideoJobObject {
  id: string;
  object: string;
  status: 'queued' | 'processing' | 'succeeded' | 'failed';
  progress: number;
  created: number;
  model: string;
  job_id: string;
  created_at: number;
  url?: string;
  expires_at?: number;
  data?: Array<{ url: string; expires_at: number }>;
  model_used?: string;
  credits_used?: number;
  error?: { code: string; message: string };
}

export async function postVideo(tenant: Pick<Tenant, 'fetch'>, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return tenant.fetch('/v1/videos/generations', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Polls a job until it ends, returning every state seen on the way. */
export async function waitForJob(fetchJob: (path: string) => Promise<Response>, id: string, opts: { until?: (job: VideoJobObject) => boolean; timeoutMs?: number } = {}): Promise<{ job: VideoJobObject; seen: VideoJobObject[] }> {
  const until = opts.until ?? ((job: VideoJobObject) => job.status === 'succeeded' || job.status === 'failed');
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  const seen: VideoJobObject[] = [];
  for (;;) {
    const res = await fetchJob(`/v1/videos/generations/${id}`);
    expect(res.status).to.equal(200);
    const job = (await res.json()) as VideoJobObject;
    seen.push(job);
    if (until(job)) return { job, seen };
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} (${job.progress}%)`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Fetches a signed URL over plain HTTP and checks the file is an H.264 MP4. */
export async function expectPlayableMp4(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.equal('video/mp4');
  const data = Buffer.from(await res.arrayBuffer());
  const top = readBoxes(data).map((b) => b.type);
  expect(top[0]).to.equal('ftyp');
  expect(top).to.include.members(['moov', 'mdat']);
  const stsd = findBox(data, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd']);
  expect(stsd, 'stsd').to.not.equal(undefined);
  const entries = sampleEntries(data, stsd!);
  expect(entries.map((e) => e.type)).to.deep.equal(['avc1']);
  expect(visualEntryChildren(data, entries[0]).map((b) => b.type)).to.include('avcC');
  expect(findBox(data, ['moov', 'trak', 'mdia', 'hdlr'])).to.not.equal(undefined);
  return data;
}
