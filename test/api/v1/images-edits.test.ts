import { expect } from 'chai';
import http from 'node:http';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { getBalance } from '../../../domain/ledger';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { bytesOf, isPng, isWebp, ledgerKinds, pngImage, withoutProviderKeys } from '../../support/media';

describe('POST /v1/images/edits', function () {
  this.timeout(180_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    // Small upload limits so the 413 paths need little data: 300 kB a file, the form 256 KiB more.
    gateway = await startTestGateway({ env: withoutProviderKeys({ MAX_UPLOAD_BYTES: '300000' }) });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  async function uploadsLeft(requestId: string, fields = ['0-image', '1-image', '1-mask', '2-mask']): Promise<string[]> {
    const left: string[] = [];
    for (const name of fields) if (await gateway.runtime.storage.exists(`uploads/${requestId}/${name}`)) left.push(name);
    return left;
  }

  it('edits an uploaded image through the official client and answers a signed URL', async () => {
    const source = await pngImage(96, 48);
    const { data, response } = await tenant.client.images.edit({
      model: 'sim-image', prompt: 'tint it', image: await toFile(source, 'source.png', { type: 'image/png' }),
    }).withResponse();
    const edited = await bytesOf(await fetch(data.data![0].url!));
    expect(isPng(edited)).to.equal(true);
    const meta = await sharp(edited).metadata();
    expect([meta.width, meta.height]).to.deep.equal([96, 48]);
    expect(data.data![0].revised_prompt).to.include('tint it');
    expect(response.headers.get('x-credits-used')).to.equal('1');
    // The upload was only the request's input: gone once the request closed.
    expect(await uploadsLeft(response.headers.get('x-request-id')!)).to.deep.equal([]);
  });

  it('takes several images (image[]) and a mask, and answers b64_json in the output format', async () => {
    const [first, second, mask] = await Promise.all([pngImage(32, 32), pngImage(32, 32, { r: 0, g: 0, b: 255, alpha: 1 }), pngImage(32, 32, { r: 0, g: 0, b: 0, alpha: 0 })]);
    const result = await tenant.client.images.edit({
      model: 'sim-image', prompt: 'merge', response_format: 'b64_json', output_format: 'webp', n: 2,
      image: [await toFile(first, 'a.png', { type: 'image/png' }), await toFile(second, 'b.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    });
    expect(result.data).to.have.length(2);
    for (const item of result.data!) expect(isWebp(Buffer.from(item.b64_json!, 'base64'))).to.equal(true);
  });

  it('streams an edit with image_edit.* events', async () => {
    const stream = await tenant.client.images.edit({
      model: 'sim-image', prompt: 'streamed edit', image: await toFile(await pngImage(16, 16), 'a.png', { type: 'image/png' }), stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push((event as { type: string }).type);
    expect(types).to.deep.equal(['image_edit.completed']);
  });

  it('refuses models without the imageEdit capability, and leaves no upload behind', async () => {
    try {
      await tenant.client.images.edit({ model: 'dall-e-3', prompt: 'x', image: await toFile(await pngImage(), 'a.png', { type: 'image/png' }) });
      expect.fail('should be refused');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect([e.param, e.code]).to.deep.equal(['model', 'model_not_supported']);
      expect(await uploadsLeft(e.requestID!)).to.deep.equal([]);
    }
  });

  it('refuses a file that is not an image, a missing image, and a parameter the model does not take', async () => {
    const notImage = await tenant.client.images.edit({ model: 'sim-image', prompt: 'x', image: await toFile(Buffer.from('plain text, not pixels'), 'a.png') }).catch((e) => e);
    expect([notImage.status, notImage.param, notImage.code]).to.deep.equal([400, 'image', 'invalid_image_format']);
    expect(await uploadsLeft(notImage.requestID)).to.deep.equal([]);

    const form = new FormData();
    form.append('model', 'sim-image');
    form.append('prompt', 'x');
    const missing = await tenant.fetch('/v1/images/edits', { method: 'POST', body: form });
    expect(missing.status).to.equal(400);
    expect(((await missing.json()) as { error: { param: string } }).error.param).to.equal('image');

    const backdrop = await tenant.client.images.edit({ model: 'sim-image', prompt: 'x', image: await toFile(await pngImage(), 'a.png', { type: 'image/png' }), background: 'transparent' } as never).catch((e) => e);
    expect([backdrop.status, backdrop.param]).to.deep.equal([400, 'background']);
  });

  it('replays an edit sent again with the same Idempotency-Key and the same image, charging once', async () => {
    const t = await gateway.newTenant({ credits: 10 });
    const send = async (image: Buffer) => t.client.images.edit(
      { model: 'sim-image', prompt: 'same edit', image: await toFile(image, 'a.png', { type: 'image/png' }) },
      { headers: { 'Idempotency-Key': 'edit-once' } },
    ).withResponse();
    const png = await pngImage(20, 20);
    const first = await send(png);
    const again = await send(png);
    expect(again.response.headers.get('x-idempotent-replayed')).to.equal('true');
    expect(again.data.data![0].url).to.equal(first.data.data![0].url);
    expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(9_000_000);
    const other = await send(await pngImage(21, 21)).catch((e) => e);
    expect([other.status, other.code]).to.deep.equal([422, 'idempotency_key_reused']);
    expect(await uploadsLeft(other.requestID)).to.deep.equal([]);
  });

  describe('upload limits', () => {
    it('refuses a declared Content-Length over the limit with 413 and charges nothing', async () => {
      const t = await gateway.newTenant({ credits: 5 });
      const big = Buffer.concat([await pngImage(8, 8), Buffer.alloc(700_000, 1)]);
      const err = await t.client.images.edit({ model: 'sim-image', prompt: 'x', image: await toFile(big, 'big.png', { type: 'image/png' }) }).catch((e) => e);
      expect(err).to.be.instanceOf(OpenAI.APIError);
      expect([err.status, err.code]).to.deep.equal([413, 'request_too_large']);
      expect(await uploadsLeft(err.requestID)).to.deep.equal([]);
      expect(await ledgerKinds(gateway.runtime.db, err.requestID)).to.deep.equal([]);
      expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(5_000_000);
    });

    it('answers 413 as soon as a streamed part passes the per-file limit, before the body ends', async () => {
      const t = await gateway.newTenant({ credits: 5 });
      const boundary = 'limit-test-boundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nsim-image\r\n`
        + `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n`
        + `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
      );
      const url = new URL(`${gateway.url}/v1/images/edits`);
      const outcome = await new Promise<{ status: number; body: string; requestId: string; sentWhenAnswered: number }>((resolve, reject) => {
        let sent = 0;
        const req = http.request({
          host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
          // No Content-Length: the body is chunked, so only the running count can stop it.
          headers: { authorization: `Bearer ${t.key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
        }, (res) => {
          const sentWhenAnswered = sent;
          let body = '';
          res.on('data', (c) => { body += c; });
          res.on('end', () => resolve({ status: res.statusCode!, body, requestId: String(res.headers['x-request-id']), sentWhenAnswered }));
          req.end(`\r\n--${boundary}--\r\n`);
        });
        req.on('error', reject);
        req.write(head);
        // 64 kB at a time, up to 2 MB, without ever finishing the part: the answer must come first.
        const pump = () => {
          if (sent >= 2_000_000 || req.writableEnded) return;
          sent += 65_536;
          req.write(Buffer.alloc(65_536, 7), () => setTimeout(pump, 5));
        };
        pump();
      });
      expect(outcome.status).to.equal(413);
      expect(JSON.parse(outcome.body).error).to.include({ code: 'file_too_large', param: 'image', type: 'invalid_request_error' });
      expect(outcome.sentWhenAnswered).to.be.lessThan(2_000_000);
      expect(await uploadsLeft(outcome.requestId)).to.deep.equal([]);
      expect(await ledgerKinds(gateway.runtime.db, outcome.requestId)).to.deep.equal([]);
      expect((await getBalance(gateway.runtime.db, t.workspaceId)).totalMicro).to.equal(5_000_000);
    });
  });
});
