import { expect } from 'chai';
import http from 'node:http';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';

interface Answer {
  status: number;
  body: { error?: { code: string; type: string } };
  /** An error on the request side (a reset connection), if any. */
  requestError: string | null;
  sentBytes: number;
}

/**
 * POSTs a JSON chat request of `totalBytes`, written in pieces without a Content-Length (chunked), the
 * way a streaming client sends it; keeps writing while the server answers, as such clients do.
 */
function postChunked(url: string, tenant: Tenant, totalBytes: number, opts: { declaredLength?: boolean } = {}): Promise<Answer> {
  const head = Buffer.from('{"model":"sim-chat","messages":[{"role":"user","content":"');
  const tail = Buffer.from('"}]}');
  const filler = totalBytes - head.length - tail.length;
  const piece = Buffer.alloc(64 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let requestError: string | null = null;
    let sentBytes = 0;
    let response: { status: number; body: Answer['body'] } | null = null;
    let writing = true;
    const settle = () => {
      if (response && !writing) resolve({ ...response, requestError, sentBytes });
    };
    const headers: Record<string, string> = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' };
    if (opts.declaredLength) headers['content-length'] = String(totalBytes);
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        response = { status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
        settle();
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      requestError = err.code ?? err.message;
    });
    const write = (data: Buffer) => new Promise<void>((done) => {
      sentBytes += data.length;
      if (req.write(data)) return done();
      const resume = () => {
        req.off('drain', resume);
        req.off('close', resume);
        done();
      };
      req.once('drain', resume);
      req.once('close', resume);
    });
    void (async () => {
      await write(head);
      for (let left = filler; left > 0 && !req.destroyed; left -= piece.length) await write(piece.subarray(0, Math.min(piece.length, left)));
      if (!req.destroyed) {
        sentBytes += tail.length;
        await new Promise<void>((done) => req.end(tail, done));
      }
    })().catch(() => undefined).finally(() => {
      // The whole body went out (or the connection broke): only now is it known whether it was reset.
      setTimeout(() => { writing = false; settle(); }, 100);
    });
  });
}

describe('security: body size limit, chunked or not', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 1000 });
  });
  after(() => gateway?.stop());

  const MiB = 1024 * 1024;

  it('answers 413 (not a reset) to a 26 MiB JSON body sent chunked', async () => {
    const answer = await postChunked(gateway.url, tenant, 26 * MiB);
    expect(answer.status).to.equal(413);
    expect(answer.body.error).to.include({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(answer.requestError).to.equal(null);
    expect(answer.sentBytes).to.equal(26 * MiB);
  });

  it('answers 413 to a chunked body far over the limit too', async () => {
    const answer = await postChunked(gateway.url, tenant, 80 * MiB);
    expect(answer.status).to.equal(413);
    expect(answer.body.error?.code).to.equal('request_too_large');
    expect(answer.requestError).to.equal(null);
    expect(answer.sentBytes).to.equal(80 * MiB);
  });

  it('answers 413 to a declared Content-Length over the limit, keeping none of it', async () => {
    const answer = await postChunked(gateway.url, tenant, 26 * MiB, { declaredLength: true });
    expect(answer.status).to.equal(413);
    expect(answer.body.error?.code).to.equal('request_too_large');
    expect(answer.requestError).to.equal(null);
  });

  it('charges nothing for a refused body, and takes a body just under the limit', async () => {
    expect(await gateway.runtime.db('credit_ledger').where({ workspace_id: tenant.workspaceId }).whereNot({ kind: 'topup' })).to.deep.equal([]);
    const res = await tenant.fetch('/v1/embeddings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-embed', input: 'x'.repeat(2 * MiB) }) });
    expect(res.status).to.equal(200);
  });
});
