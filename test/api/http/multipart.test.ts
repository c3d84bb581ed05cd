import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readMultipart, type MultipartLimits } from '../../../api/http/multipart';
import { GatewayError } from '../../../core/errors';

/** A bare HTTP server that reads each request with readMultipart and answers what it saw. */
async function formServer(limits: MultipartLimits) {
  const discarded: string[][] = [];
  const files: Array<{ field: string; filename: string; mimeType: string; bytes: number }> = [];
  // Answers every request, failures included, so its promise never rejects.
  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    try {
      const form = await readMultipart<{ field: string; bytes: number }>(req, {
        limits,
        onFile: async (file) => {
          let bytes = 0;
          for await (const chunk of file.stream) bytes += (chunk as Buffer).length;
          files.push({ field: file.field, filename: file.filename, mimeType: file.mimeType, bytes });
          return { field: file.field, bytes };
        },
        discard: async (values) => { discarded.push(values.map((v) => v.field)); },
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ fields: form.fields, files: form.files.map((f) => ({ field: f.field, filename: f.filename, bytes: f.value.bytes })) }));
    } catch (err) {
      const e = err as GatewayError;
      res.writeHead(e.status ?? 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: e.code, param: e.param } }));
    }
  };
  const server = http.createServer((req, res) => { void answer(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, discarded, files, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('readMultipart', () => {
  let server: Awaited<ReturnType<typeof formServer>>;
  beforeEach(async () => {
    server = await formServer({ requestBytes: 200_000, fileBytes: (field) => (field === 'small' ? 1_000 : 100_000), files: 3 });
  });
  afterEach(() => server.close());

  it('streams files to the caller and collects fields, `name[]` and repeated names as arrays', async () => {
    const form = new FormData();
    form.append('model', 'm');
    form.append('tags[]', 'a');
    form.append('tags[]', 'b');
    form.append('repeat', '1');
    form.append('repeat', '2');
    form.append('image[]', new Blob([Buffer.alloc(5_000, 1)], { type: 'image/png' }), 'ünï.png');
    form.append('image[]', new Blob([Buffer.alloc(7_000, 2)]), 'two.bin');
    const res = await fetch(server.url, { method: 'POST', body: form });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({
      fields: { model: 'm', tags: ['a', 'b'], repeat: ['1', '2'] },
      files: [{ field: 'image', filename: 'ünï.png', bytes: 5_000 }, { field: 'image', filename: 'two.bin', bytes: 7_000 }],
    });
    expect(server.files.map((f) => f.mimeType)).to.deep.equal(['image/png', 'application/octet-stream']);
  });

  it('refuses a declared Content-Length over the limit before handing out any file', async () => {
    const form = new FormData();
    form.append('big', new Blob([Buffer.alloc(250_000)]), 'big.bin');
    const res = await fetch(server.url, { method: 'POST', body: form });
    expect(res.status).to.equal(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('request_too_large');
    expect(server.files).to.deep.equal([]);
  });

  it('cuts a file off at its field\'s limit and discards what the form already stored', async () => {
    // The first file arrives (and is stored) well before the second, which is too large.
    const boundary = 'b0undary';
    const part = (name: string, size: number) => Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.bin"\r\n\r\n`), Buffer.alloc(size), Buffer.from('\r\n'),
    ]);
    const url = new URL(server.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }, (res) => {
        let body = '';
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      const second = part('small', 5_000);
      const headerEnd = second.indexOf('\r\n\r\n') + 4;
      // The second part's header ends the first file; its bytes come later.
      req.write(Buffer.concat([part('first', 2_000), second.subarray(0, headerEnd)]));
      setTimeout(() => req.end(Buffer.concat([second.subarray(headerEnd), Buffer.from(`--${boundary}--\r\n`)])), 200);
    });
    expect(answer.status).to.equal(413);
    expect(JSON.parse(answer.body).error).to.deep.equal({ code: 'file_too_large', param: 'small' });
    expect(server.files.map((f) => f.field)).to.deep.equal(['first']);
    expect(server.discarded).to.deep.equal([['first']]);
  });

  it('refuses other content types, too many files and a truncated body with 400', async () => {
    const json = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).to.equal(400);
    expect(((await json.json()) as { error: { code: string } }).error.code).to.equal('invalid_content_type');

    const many = new FormData();
    for (let i = 0; i < 4; i++) many.append('f', new Blob([Buffer.alloc(10)]), `${i}.bin`);
    const tooMany = await fetch(server.url, { method: 'POST', body: many });
    expect(tooMany.status).to.equal(400);
    expect(((await tooMany.json()) as { error: { code: string } }).error.code).to.equal('too_many_files');

    const truncated = await fetch(server.url, {
      method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhalf a file',
    });
    expect(truncated.status).to.equal(400);
    expect(((await truncated.json()) as { error: { code: string } }).error.code).to.equal('invalid_multipart');
  });
});
