import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/env';
import { ensureGoTool, MINIO } from '../../stack/go-tools';
import { MINIO_DEV_CREDENTIALS, startMinio, type MinioServer } from '../../stack/minio';
import { freePort } from '../../stack/processes';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { multipartBody } from '../support/multipart-body';

describe('GET /healthz', function () {
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
  });
  after(() => gateway?.stop());

  it('reports Postgres, Temporal and S3 reachable, without a key', async () => {
    const res = await fetch(`${gateway.url}/healthz`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const body = (await res.json()) as any;
    expect(body.status).to.equal('ok');
    for (const part of ['postgres', 'temporal', 's3']) expect(body[part].ok, part).to.equal(true);
  });
});

describe('a gateway started while object storage is down', function () {
  this.timeout(180_000);
  let gateway: TestGateway | null = null;
  let minio: MinioServer | null = null;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'minio-late-'));
  after(async () => {
    await gateway?.stop();
    await minio?.process.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, serves chat, reports S3 degraded, answers uploads 503, and creates its bucket once S3 is back', async () => {
    const port = await freePort();
    const s3 = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', ...MINIO_DEV_CREDENTIALS, bucket: 'late-bucket', forcePathStyle: true };
    gateway = await startTestGateway({ s3 });
    const tenant = await gateway.newTenant();

    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).to.equal(200);
    const body = (await health.json()) as any;
    expect(body).to.include({ status: 'degraded' });
    expect([body.postgres.ok, body.temporal.ok, body.s3.ok]).to.deep.equal([true, true, false]);
    const chat = await tenant.fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'no storage needed' }] }) });
    expect(chat.status).to.equal(200);

    const upload = () => {
      const form = multipartBody([{ name: 'purpose', value: 'assistants' }, { name: 'file', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('kept') }]);
      return tenant.fetch('/v1/files', { method: 'POST', headers: { 'content-type': form.contentType }, body: form.body });
    };
    const refused = await upload();
    expect(refused.status).to.equal(503);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect(((await refused.json()) as any).error).to.include({ code: 'service_unavailable', type: 'server_error' });

    const config = loadConfig();
    minio = await startMinio({ binary: ensureGoTool(MINIO, config.cacheDir), dataDir, port, consolePort: await freePort(), logFile: path.join(dataDir, 'minio.log') });
    const stored = await upload();
    expect(stored.status).to.equal(200);
    expect(((await (await fetch(`${gateway.url}/healthz`)).json()) as any).status).to.equal('ok');
  });
});
