import { expect } from 'chai';
import { UpstreamError } from '../../core/errors';
import { upstreamJson } from '../../providers/http';
import { FakeUpstream } from '../support/fake-upstream';
import { freePort } from '../../stack/processes';

describe('upstream JSON calls (providers/http.ts)', () => {
  let fake: FakeUpstream;
  before(async () => {
    fake = new FakeUpstream();
    await fake.start();
  });
  after(() => fake?.stop());

  const rejection = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a rejection'); }, (err: unknown) => err as UpstreamError);

  it('sends JSON with its headers over kept-alive connections and parses the answer', async () => {
    fake.on('POST /v1/echo', (req) => ({ json: { got: req.json, auth: req.headers.authorization, type: req.headers['content-type'] }, headers: { 'x-upstream': 'yes' } }));
    const first = await upstreamJson<any>('acme', `${fake.url}/v1/echo`, { json: { a: 1 }, headers: { authorization: 'Bearer k' } });
    const second = await upstreamJson<any>('acme', `${fake.url}/v1/echo`, { json: { a: 2 } });
    expect(first.body).to.deep.equal({ got: { a: 1 }, auth: 'Bearer k', type: 'application/json' });
    expect(first.headers.get('x-upstream')).to.equal('yes');
    expect(second.body.got).to.deep.equal({ a: 2 });
    expect(fake.requests.filter((r) => r.path === '/v1/echo').map((r) => r.headers.connection)).to.deep.equal(['keep-alive', 'keep-alive']);
  });

  it('classifies a non-2xx answer once, with its Retry-After', async () => {
    fake.on('POST /v1/busy', { status: 429, headers: { 'retry-after': '3' }, json: { error: { message: 'slow down' } } });
    const err = await rejection(upstreamJson('acme', `${fake.url}/v1/busy`, { json: {} }));
    expect(err).to.be.instanceOf(UpstreamError);
    expect(err.toJSON()).to.deep.include({ status: 429, message: 'acme is rate limiting requests: slow down' });
    expect(err.retryAfterMs).to.equal(3000);
  });

  it('calls a body that is not JSON a bad response', async () => {
    fake.on('POST /v1/html', { body: '<html>oops</html>' });
    const err = await rejection(upstreamJson('acme', `${fake.url}/v1/html`, { json: {} }));
    expect(err.kind).to.equal('bad_response');
  });

  it('says an unreachable host is unreachable by its error code, never its address', async () => {
    const port = await freePort();
    const err = await rejection(upstreamJson('acme', `http://127.0.0.1:${port}/v1/x`, { json: {} }));
    expect(err.kind).to.equal('network');
    expect(err.message).to.equal('acme is unreachable (ECONNREFUSED)');
  });

  it('times out past its deadline, and is cancelled by its signal', async () => {
    fake.on('POST /v1/hang', { hang: true });
    const late = await rejection(upstreamJson('acme', `${fake.url}/v1/hang`, { json: {}, timeoutMs: 100 }));
    expect(late.kind).to.equal('timeout');
    const abort = new AbortController();
    const pending = rejection(upstreamJson('acme', `${fake.url}/v1/hang`, { json: {}, signal: abort.signal }));
    abort.abort();
    expect((await pending).code).to.equal('upstream_cancelled');
  });

  it('sends a form through fetch, which encodes it', async () => {
    fake.on('POST /v1/form', (req) => ({ json: { type: String(req.headers['content-type']).split(';')[0], size: req.raw.length > 0 } }));
    const form = new FormData();
    form.append('prompt', 'a cat');
    const { body } = await upstreamJson<any>('acme', `${fake.url}/v1/form`, { body: form });
    expect(body).to.deep.equal({ type: 'multipart/form-data', size: true });
  });
});
