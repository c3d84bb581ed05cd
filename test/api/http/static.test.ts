/**
 * The web app's files as a browser receives them: text files compressed (brotli, else gzip) with
 * `Vary: Accept-Encoding`, hashed assets cached for a year, images as they are, a changed file compressed anew.
 */
import { expect } from 'chai';
import Koa from 'koa';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { chooseEncoding, webAppMiddleware } from '../../../api/http/static';

interface RawResponse { status: number; headers: http.IncomingHttpHeaders; body: Buffer }

/** A GET without the automatic decompression of fetch, so the bytes on the wire are what is checked. */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('web app files: compression and caching', () => {
  let dir: string;
  let server: http.Server;
  let base: string;
  const script = `export const rows = [${Array.from({ length: 4000 }, (_, i) => `{ id: ${i}, label: "row ${i}" }`).join(', ')}];\n`;
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-static-'));
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><html><head><script type="module" src="/assets/index-abc123.js"></script></head><body></body></html>');
    fs.writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), script);
    fs.writeFileSync(path.join(dir, 'assets', 'logo-def456.png'), png);
    const app = new Koa();
    app.use(webAppMiddleware(dir));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('sends brotli where the browser accepts it, and caches hashed assets for a year', async () => {
    const res = await rawGet(`${base}/assets/index-abc123.js`, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(res.status).to.equal(200);
    expect(res.headers['content-encoding']).to.equal('br');
    expect(res.headers.vary).to.match(/accept-encoding/i);
    expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(zlib.brotliDecompressSync(res.body).toString()).to.equal(script);
    expect(res.body.length).to.be.lessThan(script.length / 4);
  });

  it('sends gzip to a browser without brotli, and the page itself compressed and never cached', async () => {
    const asset = await rawGet(`${base}/assets/index-abc123.js`, { 'accept-encoding': 'gzip' });
    expect(asset.headers['content-encoding']).to.equal('gzip');
    expect(zlib.gunzipSync(asset.body).toString()).to.equal(script);
    const page = await rawGet(`${base}/settings/keys`, { 'accept-encoding': 'gzip, br' });
    expect(page.headers['content-encoding']).to.equal('br');
    expect(page.headers['cache-control']).to.equal('no-cache');
    expect(zlib.brotliDecompressSync(page.body).toString()).to.include('/assets/index-abc123.js');
  });

  it('sends the file as it is to a client that accepts no encoding, and images never compressed again', async () => {
    const plain = await rawGet(`${base}/assets/index-abc123.js`);
    expect(plain.headers['content-encoding']).to.equal(undefined);
    expect(plain.body.toString()).to.equal(script);
    const refused = await rawGet(`${base}/assets/index-abc123.js`, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).to.equal(undefined);
    const image = await rawGet(`${base}/assets/logo-def456.png`, { 'accept-encoding': 'gzip, br' });
    expect(image.headers['content-encoding']).to.equal(undefined);
    expect(image.body.equals(png)).to.equal(true);
  });

  it('compresses a file again once it changed on disk', async () => {
    const file = path.join(dir, 'assets', 'index-abc123.js');
    await rawGet(`${base}/assets/index-abc123.js`, { 'accept-encoding': 'br' });
    const changed = `${script}export const more = 1;\n`;
    fs.writeFileSync(file, changed);
    fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const res = await rawGet(`${base}/assets/index-abc123.js`, { 'accept-encoding': 'br' });
    expect(zlib.brotliDecompressSync(res.body).toString()).to.equal(changed);
  });

  it('reads Accept-Encoding as browsers and proxies write it', () => {
    expect(chooseEncoding('gzip, deflate, br')).to.equal('br');
    expect(chooseEncoding('gzip;q=1.0, br;q=0')).to.equal('gzip');
    expect(chooseEncoding('*')).to.equal('gzip');
    expect(chooseEncoding('identity')).to.equal(null);
    expect(chooseEncoding(undefined)).to.equal(null);
  });
});
