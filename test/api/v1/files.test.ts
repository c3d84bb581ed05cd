import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { chunkedStream, listStoredKeys, multipartBody } from '../../support/multipart-body';

const MAX_UPLOAD_BYTES = 300_000;

function bytes(n: number, seed = 1): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

/** A real 2x2 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64');

async function errorOf(res: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
  return body.error;
}

function expectStorageHeaders(res: Response, used?: number, limit?: number): void {
  expect(res.headers.get('x-storage-used-bytes'), 'x-storage-used-bytes').to.match(/^\d+$/);
  expect(res.headers.get('x-storage-limit-bytes'), 'x-storage-limit-bytes').to.match(/^\d+$/);
  if (used !== undefined) expect(Number(res.headers.get('x-storage-used-bytes'))).to.equal(used);
  if (limit !== undefined) expect(Number(res.headers.get('x-storage-limit-bytes'))).to.equal(limit);
}

async function upload(tenant: Tenant, parts: Parameters<typeof multipartBody>[0], headers: Record<string, string> = {}): Promise<Response> {
  const form = multipartBody(parts);
  return tenant.fetch('/v1/files', { method: 'POST', headers: { 'content-type': form.contentType, ...headers }, body: form.body });
}

async function uploadChunked(tenant: Tenant, parts: Parameters<typeof multipartBody>[0], headers: Record<string, string> = {}): Promise<Response> {
  const form = multipartBody(parts);
  return tenant.fetch('/v1/files', {
    method: 'POST', headers: { 'content-type': form.contentType, ...headers }, body: chunkedStream(form.body), duplex: 'half',
  } as RequestInit);
}

describe('/v1/files', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway({ env: { MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) } });
  });
  after(() => gateway?.stop());

  it('uploads, retrieves, lists, streams and deletes through the official client', async () => {
    const tenant = await gateway.newTenant();
    const text = 'Quarterly notes\nline two\n';
    const { data: created, response } = await tenant.client.files.create({ file: await toFile(Buffer.from(text), 'notes.txt'), purpose: 'assistants' }).withResponse();
    expect(created.id).to.match(/^file_/);
    expect(created).to.include({ object: 'file', bytes: Buffer.byteLength(text), filename: 'notes.txt', purpose: 'assistants', status: 'processed' });
    expect(created.created_at).to.be.a('number').within(Math.floor(Date.now() / 1000) - 60, Math.floor(Date.now() / 1000) + 5);
    expectStorageHeaders(response as unknown as Response, Buffer.byteLength(text), 1024 ** 3);

    const retrieved = await tenant.client.files.retrieve(created.id);
    expect(retrieved).to.deep.equal(created);

    const listed = await tenant.client.files.list();
    expect(listed.data.map((f) => f.id)).to.deep.equal([created.id]);

    const content = await tenant.client.files.content(created.id);
    expect(content.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(await content.text()).to.equal(text);

    const image = await tenant.client.files.create({ file: await toFile(PNG, 'dot.png'), purpose: 'vision' });
    const imageContent = await tenant.client.files.content(image.id);
    expect(imageContent.headers.get('content-type')).to.equal('image/png');
    expect(Buffer.from(await imageContent.arrayBuffer()).equals(PNG)).to.equal(true);

    const storageKey = `files/${tenant.workspaceId}/${created.id}`;
    expect(await gateway.runtime.storage.exists(storageKey)).to.equal(true);
    const deleted = await tenant.client.files.delete(created.id);
    expect(deleted).to.deep.equal({ id: created.id, object: 'file', deleted: true });
    // The bytes are gone from storage at once; the record lives on only in the audit log.
    expect(await gateway.runtime.storage.exists(storageKey)).to.equal(false);
    for (const call of [() => tenant.client.files.retrieve(created.id), () => tenant.client.files.content(created.id), () => tenant.client.files.delete(created.id)]) {
      try {
        await call();
        expect.fail('should be 404');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.NotFoundError);
      }
    }
    expect(await gateway.runtime.db('files').where({ id: created.id }).first()).to.equal(undefined);
    const audit = await gateway.runtime.db('audit_log').where({ subject_id: created.id, action: 'file.delete' }).first();
    expect(audit.data).to.include({ id: created.id, filename: 'notes.txt', bytes: Buffer.byteLength(text), purpose: 'assistants' });
    expect((await tenant.client.files.list()).data.map((f) => f.id)).to.deep.equal([image.id]);
  });

  it('puts the storage headers on every response, errors included', async () => {
    const tenant = await gateway.newTenant();
    const ok = await upload(tenant, [{ name: 'purpose', value: 'user_data' }, { name: 'file', filename: 'a.bin', data: bytes(1000) }]);
    expect(ok.status).to.equal(200);
    expectStorageHeaders(ok, 1000);
    const id = ((await ok.json()) as { id: string }).id;
    const responses = [
      await tenant.fetch('/v1/files'),
      await tenant.fetch(`/v1/files/${id}`),
      await tenant.fetch(`/v1/files/${id}/content`),
      await tenant.fetch('/v1/files/file_doesnotexist'),
      await tenant.fetch('/v1/files?limit=0'),
      await upload(tenant, [{ name: 'purpose', value: 'fine-tune' }, { name: 'file', filename: 'a.bin', data: bytes(10) }]),
      await upload(tenant, [{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'big.bin', data: bytes(MAX_UPLOAD_BYTES + 100_000) }]),
    ];
    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200, 404, 400, 400, 413]);
    for (const res of responses) {
      expectStorageHeaders(res, 1000, 1024 ** 3);
      await res.arrayBuffer();
    }
    const del = await tenant.fetch(`/v1/files/${id}`, { method: 'DELETE' });
    expect(del.status).to.equal(200);
    expectStorageHeaders(del, 0);
  });

  it("hides another workspace's file behind the same 404 as a missing one", async () => {
    const owner = await gateway.newTenant();
    const other = await gateway.newTenant();
    const file = await owner.client.files.create({ file: await toFile(Buffer.from('secret'), 'secret.txt'), purpose: 'user_data' });
    const missing = 'file_000000000000000000000000';
    for (const [method, suffix] of [['GET', ''], ['GET', '/content'], ['DELETE', '']] as const) {
      const theirs = await other.fetch(`/v1/files/${file.id}${suffix}`, { method });
      const none = await other.fetch(`/v1/files/${missing}${suffix}`, { method });
      expect(theirs.status).to.equal(404);
      expect(none.status).to.equal(404);
      const a = await errorOf(theirs);
      const b = await errorOf(none);
      expect({ ...a, message: a.message.replace(file.id, 'ID') }).to.deep.equal({ ...b, message: b.message.replace(missing, 'ID') });
      expect(a.code).to.equal('file_not_found');
    }
    expect((await other.client.files.list()).data).to.deep.equal([]);
    // Still there for its owner.
    expect((await owner.client.files.retrieve(file.id)).id).to.equal(file.id);
  });

  it('pages like OpenAI: newest first, limit and after, order, purpose filter', async () => {
    const tenant = await gateway.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const f = await tenant.client.files.create({ file: await toFile(Buffer.from(`file ${i}`), `f${i}.txt`), purpose: i % 2 === 0 ? 'assistants' : 'batch' });
      ids.push(f.id);
    }
    const newestFirst = [...ids].reverse();
    const first = await tenant.fetch('/v1/files?limit=2');
    const page = (await first.json()) as { object: string; data: Array<{ id: string }>; has_more: boolean; first_id: string; last_id: string };
    expect(page.object).to.equal('list');
    expect(page.data.map((f) => f.id)).to.deep.equal(newestFirst.slice(0, 2));
    expect(page).to.include({ has_more: true, first_id: newestFirst[0], last_id: newestFirst[1] });

    const all: string[] = [];
    for await (const f of tenant.client.files.list({ limit: 2 })) all.push(f.id);
    expect(all).to.deep.equal(newestFirst);

    const asc: string[] = [];
    for await (const f of tenant.client.files.list({ limit: 3, order: 'asc' })) asc.push(f.id);
    expect(asc).to.deep.equal(ids);

    const batch = await tenant.client.files.list({ purpose: 'batch' });
    expect(batch.data.map((f) => f.id)).to.deep.equal([ids[3], ids[1]]);

    // A cursor deleted between two pages still works.
    await tenant.client.files.delete(newestFirst[1]);
    const after = (await (await tenant.fetch(`/v1/files?after=${newestFirst[1]}`)).json()) as { data: Array<{ id: string }> };
    expect(after.data.map((f) => f.id)).to.deep.equal(newestFirst.slice(2));

    const bad = await tenant.fetch('/v1/files?order=sideways');
    expect(bad.status).to.equal(400);
    expect((await errorOf(bad)).param).to.equal('order');
  });

  it('replays an Idempotency-Key upload without storing twice, and refuses the key with another body (422)', async () => {
    const tenant = await gateway.newTenant();
    const file = await toFile(Buffer.from('same bytes'), 'same.txt');
    const headers = { 'Idempotency-Key': 'upload-1' };
    const first = await tenant.client.files.create({ file, purpose: 'assistants' }, { headers }).withResponse();
    const again = await tenant.client.files.create({ file: await toFile(Buffer.from('same bytes'), 'same.txt'), purpose: 'assistants' }, { headers }).withResponse();
    expect(again.data).to.deep.equal(first.data);
    expect(again.response.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(await gateway.runtime.db('files').where({ workspace_id: tenant.workspaceId }).count<{ count: number }[]>()).to.deep.equal([{ count: 1 }]);
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.deep.equal([`files/${tenant.workspaceId}/${first.data.id}`]);

    const other = await upload(tenant, [{ name: 'purpose', value: 'assistants' }, { name: 'file', filename: 'same.txt', data: Buffer.from('other bytes') }], headers);
    expect(other.status).to.equal(422);
    expectStorageHeaders(other, Buffer.byteLength('same bytes'));
    expect(await errorOf(other)).to.include({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.have.length(1);

    // The key is the workspace's: another workspace's same key is a new upload.
    const stranger = await gateway.newTenant();
    const theirs = await stranger.client.files.create({ file: await toFile(Buffer.from('same bytes'), 'same.txt'), purpose: 'assistants' }, { headers });
    expect(theirs.id).not.to.equal(first.data.id);
  });

  it('lets concurrent uploads with one Idempotency-Key store a single file', async () => {
    const tenant = await gateway.newTenant();
    const data = bytes(200_000, 3);
    const parts = [{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'batch.jsonl', data }];
    const results = await Promise.all([0, 1, 2].map(() => uploadChunked(tenant, parts, { 'Idempotency-Key': 'concurrent' })));
    expect(results.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    const bodies = (await Promise.all(results.map((r) => r.json()))) as Array<{ id: string; bytes: number }>;
    expect(new Set(bodies.map((b) => b.id)).size).to.equal(1);
    expect(bodies[0].bytes).to.equal(data.length);
    expect(results.filter((r) => r.headers.get('x-idempotent-replayed') === 'true')).to.have.length(2);
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.deep.equal([`files/${tenant.workspaceId}/${bodies[0].id}`]);
    const content = await tenant.client.files.content(bodies[0].id);
    expect(Buffer.from(await content.arrayBuffer()).equals(data)).to.equal(true);
  });

  it('takes over an Idempotency-Key whose first upload died mid-way (no heartbeat)', async () => {
    const tenant = await gateway.newTenant();
    const db = gateway.runtime.db;
    // What a process that crashed while uploading leaves behind: a pending claim whose heartbeat stopped a minute ago.
    await db.raw(
      `insert into idempotency_keys (workspace_id, scope, key, body_hash, resource_id)
       values (?, 'files.create', 'crashed', 'pending:deadowner:' || ((extract(epoch from clock_timestamp()) * 1000)::bigint - 60000), 'file_fromdeadowner')`,
      [tenant.workspaceId],
    );
    const file = await tenant.client.files.create({ file: await toFile(Buffer.from('second try'), 'retry.txt'), purpose: 'assistants' }, { headers: { 'Idempotency-Key': 'crashed' } });
    expect(file.id).to.match(/^file_/).and.not.equal('file_fromdeadowner');
    const claim = await db('idempotency_keys').where({ workspace_id: tenant.workspaceId, key: 'crashed' }).first();
    expect(claim.resource_id).to.equal(file.id);
    expect(claim.body_hash).to.match(/^[0-9a-f]{64}$/);
    const replay = await tenant.client.files.create({ file: await toFile(Buffer.from('second try'), 'retry.txt'), purpose: 'assistants' }, { headers: { 'Idempotency-Key': 'crashed' } });
    expect(replay.id).to.equal(file.id);
  });

  it('refuses a file over the maximum upload size before storing anything', async () => {
    const tenant = await gateway.newTenant();
    const big = bytes(MAX_UPLOAD_BYTES + 1);
    // Declared Content-Length: refused before reading.
    try {
      await tenant.client.files.create({ file: await toFile(big, 'big.bin'), purpose: 'batch' });
      expect.fail('should be refused');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(413);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('file_too_large');
    }
    // No length declared: cut off while streaming, one byte over the limit.
    const chunked = await uploadChunked(tenant, [{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'big.bin', data: big }]);
    expect(chunked.status).to.equal(413);
    expect((await errorOf(chunked)).code).to.equal('file_too_large');
    // Exactly at the limit is fine.
    const exact = await uploadChunked(tenant, [{ name: 'purpose', value: 'batch' }, { name: 'file', filename: 'exact.bin', data: bytes(MAX_UPLOAD_BYTES) }]);
    expect(exact.status).to.equal(200);
    const id = ((await exact.json()) as { id: string }).id;
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.deep.equal([`files/${tenant.workspaceId}/${id}`]);
  });

  it('refuses uploads over the storage limit, also when two race for the last room', async () => {
    const tenant = await gateway.newTenant();
    await gateway.runtime.db('workspaces').where({ id: tenant.workspaceId }).update({ storage_limit_bytes: 10_000 });
    const parts = (n: number, name: string) => [{ name: 'purpose', value: 'user_data' }, { name: 'file', filename: name, data: bytes(n) }];

    const [a, b] = await Promise.all([uploadChunked(tenant, parts(6000, 'a.bin')), uploadChunked(tenant, parts(6000, 'b.bin'))]);
    expect([a.status, b.status].sort()).to.deep.equal([200, 413]);
    const refused = a.status === 413 ? a : b;
    expect((await errorOf(refused)).code).to.equal('storage_limit_exceeded');
    expectStorageHeaders(refused, 6000, 10_000);
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.have.length(1);

    // Declared length over the room left: refused up front; what fits is taken.
    const over = await upload(tenant, parts(4100, 'c.bin'));
    expect(over.status).to.equal(413);
    expect((await errorOf(over)).code).to.equal('storage_limit_exceeded');
    const fits = await upload(tenant, parts(4000, 'd.bin'));
    expect(fits.status).to.equal(200);
    expectStorageHeaders(fits, 10_000, 10_000);
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.have.length(2);

    // The plan's limit applies when the workspace sets none.
    const planned = await gateway.newTenant({ planId: 'starter' });
    const res = await planned.fetch('/v1/files');
    expectStorageHeaders(res, 0, 10 * 1024 ** 3);
  });

  it('keeps filenames as data: traversal, control characters and over-long names', async () => {
    const tenant = await gateway.newTenant();
    const names: Array<[string, string]> = [
      ['../../etc/passwd', 'passwd'],
      ['..\\..\\windows\\win.ini', 'win.ini'],
      ['..', 'file'],
      ['re\u0007port\u001b[31m\u202egnp.txt', 'report[31mgnp.txt'],
      ['  spaced   name .md ', 'spaced name .md'],
      ['résumé.pdf', 'résumé.pdf'],
    ];
    const ids: string[] = [];
    for (const [raw, expected] of names) {
      const res = await upload(tenant, [{ name: 'purpose', value: 'user_data' }, { name: 'file', filename: raw, data: Buffer.from('x'), encodeFilename: true }]);
      expect(res.status, raw).to.equal(200);
      const file = (await res.json()) as { id: string; filename: string };
      expect(file.filename, JSON.stringify(raw)).to.equal(expected);
      ids.push(file.id);
    }
    const long = `${'ä'.repeat(400)}.txt`;
    const res = await upload(tenant, [{ name: 'purpose', value: 'user_data' }, { name: 'file', filename: long, data: Buffer.from('x') }]);
    const file = (await res.json()) as { id: string; filename: string };
    expect(Buffer.byteLength(file.filename)).to.be.at.most(255);
    expect(file.filename).to.match(/^ä+\.txt$/);
    ids.push(file.id);
    // Storage keys are made of ids only.
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.deep.equal(ids.map((id) => `files/${tenant.workspaceId}/${id}`).sort());
    // A raw control character inside a part header is a malformed form, not a name.
    const raw = await upload(tenant, [{ name: 'purpose', value: 'user_data' }, { name: 'file', filename: 'bell\u0007.txt', data: Buffer.from('x') }]);
    expect(raw.status).to.equal(400);
    expect((await errorOf(raw)).code).to.equal('invalid_multipart');
    const content = await tenant.fetch(`/v1/files/${ids[3]}/content`);
    expect(content.headers.get('content-disposition')).to.equal(`attachment; filename="report[31mgnp.txt"; filename*=UTF-8''report%5B31mgnp.txt`);
  });

  it("refuses bad forms with OpenAI's error shape and stores nothing", async () => {
    const tenant = await gateway.newTenant();
    const cases: Array<[Response, number, string | null]> = [
      [await upload(tenant, [{ name: 'purpose', value: 'fine-tune' }, { name: 'file', filename: 'a.txt', data: Buffer.from('x') }]), 400, 'purpose'],
      [await upload(tenant, [{ name: 'file', filename: 'a.txt', data: Buffer.from('x') }, { name: 'purpose', value: 'nope' }]), 400, 'purpose'],
      [await upload(tenant, [{ name: 'file', filename: 'a.txt', data: Buffer.from('x') }]), 400, 'purpose'],
      [await upload(tenant, [{ name: 'purpose', value: 'assistants' }]), 400, 'file'],
      [await upload(tenant, [{ name: 'purpose', value: 'assistants' }, { name: 'file', filename: 'empty.txt', data: Buffer.alloc(0) }]), 400, 'file'],
      [await upload(tenant, [{ name: 'purpose', value: 'assistants' }, { name: 'document', filename: 'a.txt', data: Buffer.from('x') }]), 400, 'document'],
      [await tenant.fetch('/v1/files', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 400, null],
    ];
    for (const [res, status, param] of cases) {
      expect(res.status).to.equal(status);
      const error = await errorOf(res);
      expect(error.type).to.equal('invalid_request_error');
      expect(error.param).to.equal(param);
    }
    expect(await listStoredKeys(`files/${tenant.workspaceId}/`)).to.deep.equal([]);
    expect(await gateway.runtime.db('files').where({ workspace_id: tenant.workspaceId })).to.deep.equal([]);

    const viewer = await gateway.newTenant({ role: 'viewer' });
    const refused = await upload(viewer, [{ name: 'purpose', value: 'assistants' }, { name: 'file', filename: 'a.txt', data: Buffer.from('x') }]);
    expect(refused.status).to.equal(403);
    expect((await errorOf(refused)).code).to.equal('insufficient_role');
    expect((await viewer.fetch('/v1/files')).status).to.equal(200);
    expect((await viewer.fetch('/v1/files/file_any', { method: 'DELETE' })).status).to.equal(403);
  });
});
