import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { FakeUpstream, type FakeReply, type RecordedRequest } from '../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../support/gateway';
import generateText from '../providers/google/fixtures/generate-text.json';
import veoDone from '../providers/google/fixtures/veo-done.json';
import veoSubmit from '../providers/google/fixtures/veo-submit.json';

const PLATFORM_KEY = 'AIza-platform';
const WORKSPACE_KEY = `AIza-workspace-${randomBytes(12).toString('hex')}`;
const OPERATION = 'models/veo-3.0-generate-001/operations/9x7ffh2ea5ow';
const MP4 = Buffer.from('00000020667479706d703432', 'hex');

/** Google's API refuses any other key with its 400 API_KEY_INVALID, as the real one does. */
function keyed(reply: (req: RecordedRequest) => FakeReply) {
  return (req: RecordedRequest): FakeReply => {
    if (![PLATFORM_KEY, WORKSPACE_KEY].includes(String(req.headers['x-goog-api-key']))) {
      return { status: 400, json: { error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } } };
    }
    return reply(req);
  };
}

/**
 * A video job (Veo, polled over minutes by its own workflow) of a workspace that brought its own Google key:
 * submitted, polled and downloaded with that key, and charged the BYOK fee instead of the model's price.
 */
describe('workspace provider keys (BYOK) on video jobs', function () {
  this.timeout(120_000);
  const google = new FakeUpstream();
  let gateway: TestGateway;
  let owner: Tenant;

  before(async function () {
    this.timeout(180_000);
    const baseUrl = await google.start();
    google.on('POST /v1beta/models/*', keyed((req) => (req.path.endsWith(':predictLongRunning') ? { json: veoSubmit } : { json: generateText })));
    google.on(`GET /v1beta/${OPERATION}`, keyed(() => ({ json: JSON.parse(JSON.stringify(veoDone).replace('{{BASE_URL}}', baseUrl)) })));
    google.on('GET /v1beta/files/*', keyed(() => ({ headers: { 'content-type': 'video/mp4' }, body: MP4 })));
    gateway = await startTestGateway({
      env: { GOOGLE_BASE_URL: baseUrl, GOOGLE_API_KEY: PLATFORM_KEY, BYOK_KEY_RING: `k1:${randomBytes(32).toString('base64')}`, BYOK_FEE_PERCENT: '10' },
    });
    owner = await gateway.newTenant({ credits: 1000 });
  });
  after(async () => {
    await gateway?.stop();
    await google.stop();
  });

  it('submits, polls and downloads with the workspace key and settles at the fee', async () => {
    const added = await owner.fetch('/v1/provider-keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider: 'google', key: WORKSPACE_KEY }) });
    expect(added.status, await added.clone().text()).to.equal(201);

    const created = (await (await owner.fetch('/v1/videos', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'veo-3.0-generate-001', prompt: 'A cat surfing', seconds: '4' }),
    })).json()) as { id: string };
    let job: { status: string } = { status: 'queued' };
    for (let i = 0; i < 200 && !['completed', 'failed'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 250));
      job = (await (await owner.fetch(`/v1/videos/${created.id}`)).json()) as { status: string };
    }
    expect(job.status).to.equal('completed');

    const paths = google.requests.map((r) => `${r.method} ${r.path.replace(/\?.*$/, '')}`);
    expect(paths).to.include.members([
      'POST /v1beta/models/veo-3.0-generate-001:predictLongRunning', `GET /v1beta/${OPERATION}`, 'GET /v1beta/files/3vs9bz6b1e2w:download',
    ]);
    // The test call before saving, the submission, every poll and the download: all with the workspace's key.
    expect(google.requests.map((r) => r.headers['x-goog-api-key']).filter((k) => k !== WORKSPACE_KEY)).to.deep.equal([]);

    const usage = await gateway.runtime.db('usage_records').where({ request_id: created.id }).first('credits_micro', 'key_source');
    // 4 s at 40 credits a second is 160 credits at list price; the workspace's own key costs the 10% fee.
    expect({ credits: Number(usage.credits_micro), source: usage.key_source }).to.deep.equal({ credits: 16_000_000, source: 'workspace' });
  });
});
