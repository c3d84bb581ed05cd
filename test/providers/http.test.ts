import { expect } from 'chai';
import { UpstreamError } from '../../core/errors';
import { readSse, upstreamJson, upstreamStream } from '../../providers/http';
import { FakeUpstream } from '../support/fake-upstream';
import { freePort } from '../../stack/processes';

describe('upstream calls (providers/http.ts)', () => {
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

  describe('streams', () => {
    const events = async (answer: AsyncIterable<Uint8Array>, opts: Parameters<typeof readSse>[2] = {}) => {
      const data: string[] = [];
      for await (const event of readSse('acme', answer, opts)) {
        data.push(event.data);
        if (event.data === '[DONE]') break;
      }
      return data;
    };

    it('reads the events as they come, and a stream read to its end leaves its connection for the next', async () => {
      fake.on('POST /v1/stream', (req) => ({ sse: [{ n: 1, got: req.json }, { n: 2 }, '[DONE]'] }));
      const read = async (n: number) => {
        const stream = await upstreamStream('acme', `${fake.url}/v1/stream`, { json: { n } });
        try {
          expect(stream.status).to.equal(200);
          expect(stream.headers.get('content-type')).to.equal('text/event-stream');
          return await events(stream.body);
        } finally {
          stream.done();
        }
      };
      expect(await read(1)).to.deep.equal([JSON.stringify({ n: 1, got: { n: 1 } }), JSON.stringify({ n: 2 }), '[DONE]']);
      // Given up on at [DONE], its end still on the way: drained, the connection goes back to the pool.
      await new Promise((r) => setTimeout(r, 100));
      await read(2);
      const [first, second] = fake.received('POST /v1/stream');
      expect(second.remotePort).to.equal(first.remotePort);
    });

    it('classifies a non-2xx answer before any event, with its message and Retry-After', async () => {
      fake.on('POST /v1/stream-busy', { status: 503, headers: { 'retry-after': '2' }, json: { error: { message: 'overloaded' } } });
      const err = await rejection(upstreamStream('acme', `${fake.url}/v1/stream-busy`, { json: {} }));
      expect(err).to.be.instanceOf(UpstreamError);
      expect(err.kind).to.equal('server_error');
      expect(err.message).to.equal('acme failed with 503: overloaded');
      expect(err.retryAfterMs).to.equal(2000);
    });

    it('times out before the headers, and ends a stream gone silent as a timeout, at once', async () => {
      fake.on('POST /v1/stream-hang', { hang: true });
      expect((await rejection(upstreamStream('acme', `${fake.url}/v1/stream-hang`, { json: {}, timeoutMs: 100 }))).kind).to.equal('timeout');

      fake.on('POST /v1/stream-slow', { sse: [{ n: 1 }, { n: 2 }], delayMs: 2000 });
      const stream = await upstreamStream('acme', `${fake.url}/v1/stream-slow`, { json: {} });
      stream.endDeadline();
      const started = Date.now();
      const err = await rejection(events(stream.body, { idleTimeoutMs: 100 }));
      stream.done();
      expect(err.kind).to.equal('timeout');
      expect(err.message).to.equal('acme stream stalled');
      expect(Date.now() - started).to.be.lessThan(1000);
    });

    it('is cancelled by its signal in the middle of the body, and the host sees the connection close', async () => {
      fake.on('POST /v1/stream-long', { sse: Array.from({ length: 50 }, (_, n) => ({ n })), delayMs: 20 });
      const abort = new AbortController();
      const aborted = fake.abortedStreams;
      const stream = await upstreamStream('acme', `${fake.url}/v1/stream-long`, { json: {}, signal: abort.signal });
      stream.endDeadline();
      const seen: string[] = [];
      const err = await rejection((async () => {
        for await (const event of readSse('acme', stream.body, { signal: abort.signal })) {
          seen.push(event.data);
          if (seen.length === 2) abort.abort();
        }
      })());
      stream.done();
      expect(seen).to.have.length(2);
      expect(err.code).to.equal('upstream_cancelled');
      const until = Date.now() + 2000;
      while (fake.abortedStreams === aborted && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(fake.abortedStreams).to.equal(aborted + 1);
    });
  });
});
