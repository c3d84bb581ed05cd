import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress } from '../../infra/ip-policy';
import { safeFetch, SafeFetchError, type FetchRefusal, type SafeFetchOptions } from '../../infra/safe-fetch';

/** The default policy, widened for the test server on 127.0.0.1 only. */
const allowLocalServer = (address: string) => address === '127.0.0.1' || isPublicAddress(address);

async function refusal(promise: Promise<unknown>): Promise<FetchRefusal> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(SafeFetchError);
    return (err as SafeFetchError).reason;
  }
  throw new Error('expected a refusal');
}

describe('safeFetch', function () {
  this.timeout(20_000);
  let server: http.Server;
  let base: string;
  const requests: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      switch (url.pathname) {
        case '/image': res.writeHead(200, { 'content-type': 'image/png' }); res.end(Buffer.alloc(100, 7)); return;
        case '/big': res.writeHead(200, { 'content-type': 'image/png' }); res.end(Buffer.alloc(5000)); return;
        case '/big-chunked': res.writeHead(200, { 'content-type': 'image/png' }); for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000)); res.end(); return;
        case '/html': res.writeHead(200, { 'content-type': 'text/html' }); res.end('<html>'); return;
        case '/hang': return;
        case '/missing': res.writeHead(404); res.end(); return;
        case '/redirect': res.writeHead(302, { location: url.searchParams.get('to') ?? '/image' }); res.end(); return;
        case '/loop': res.writeHead(302, { location: '/loop' }); res.end(); return;
        default: res.writeHead(500); res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

  const opts = (extra: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
    maxBytes: 2000, timeoutMs: 2000, maxRedirects: 2, accept: (t) => t.startsWith('image/'), isAllowedAddress: allowLocalServer, ...extra,
  });

  it('fetches an allowed URL, following a redirect', async () => {
    const direct = await safeFetch(`${base}/image`, opts());
    expect(direct.contentType).to.equal('image/png');
    expect(direct.data.equals(Buffer.alloc(100, 7))).to.equal(true);
    const redirected = await safeFetch(`${base}/redirect?to=/image`, opts());
    expect(redirected.url).to.equal(`${base}/image`);
  });

  it('refuses the same server under the default policy (loopback), by literal and by name', async () => {
    const before = requests.length;
    expect(await refusal(safeFetch(`${base}/image`, opts({ isAllowedAddress: undefined })))).to.equal('forbidden_address');
    expect(await refusal(safeFetch(`${base.replace('127.0.0.1', 'localhost')}/image`, opts({ isAllowedAddress: undefined })))).to.equal('forbidden_address');
    expect(requests.length).to.equal(before);
  });

  it('checks every redirect target again', async () => {
    for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/x.png', 'http://[::1]/x.png', 'http://127.0.0.2:1/x.png', 'file:///etc/passwd']) {
      const reason = await refusal(safeFetch(`${base}/redirect?to=${encodeURIComponent(target)}`, opts()));
      expect(reason, target).to.be.oneOf(['forbidden_address', 'invalid_url']);
    }
    expect(await refusal(safeFetch(`${base}/loop`, opts()))).to.equal('too_many_redirects');
  });

  it('bounds size (declared and streamed), content type, status and time', async () => {
    expect(await refusal(safeFetch(`${base}/big`, opts()))).to.equal('too_large');
    expect(await refusal(safeFetch(`${base}/big-chunked`, opts()))).to.equal('too_large');
    expect(await refusal(safeFetch(`${base}/html`, opts()))).to.equal('unsupported_type');
    expect(await refusal(safeFetch(`${base}/missing`, opts()))).to.equal('fetch_failed');
    expect(await refusal(safeFetch(`${base}/hang`, opts({ timeoutMs: 300 })))).to.equal('timeout');
  });

  it('refuses other schemes and credentials in the URL', async () => {
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1/', 'ftp://example.com/a.png', 'http://user:pw@example.com/', 'nonsense']) {
      expect(await refusal(safeFetch(url, opts())), url).to.equal('invalid_url');
    }
  });
});
