import { expect } from 'chai';
import { toFile } from 'openai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { bytesOf, isPng, pngImage } from '../../support/media';
import { parseMultipart } from '../../providers/openai-compatible/multipart';

/** A real 16-bit mono 24 kHz WAV of `seconds` of silence. */
function wavOf(seconds: number): Buffer {
  const data = Math.round(seconds * 24_000) * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(24_000, 24);
  header.writeUInt32LE(48_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

describe('media endpoints through the OpenAI adapter (fake upstream)', function () {
  this.timeout(180_000);
  const fake = new FakeUpstream();
  let gateway: TestGateway;
  let tenant: Tenant;
  let upstreamPng: Buffer;

  before(async function () {
    this.timeout(180_000);
    upstreamPng = await pngImage(40, 20, { r: 10, g: 200, b: 10, alpha: 1 });
    await fake.start();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'test' } });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(async () => {
    await gateway?.stop();
    await fake.stop();
  });
  beforeEach(() => fake.reset());

  it('dall-e-3: translates the request, keeps the image in our bucket and bills hd at the size', async () => {
    fake.on('POST /v1/images/generations', { json: { created: 1700000000, data: [{ b64_json: upstreamPng.toString('base64'), revised_prompt: 'A detailed red fox in snow.' }] } });
    const { data, response } = await tenant.client.images.generate({ model: 'dall-e-3', prompt: 'a fox', size: '1792x1024', quality: 'hd', style: 'natural' }).withResponse();
    const [sent] = fake.received('POST /v1/images/generations');
    expect(sent.headers.authorization).to.equal('Bearer test');
    expect(sent.json).to.deep.equal({ model: 'dall-e-3', prompt: 'a fox', n: 1, size: '1792x1024', quality: 'hd', style: 'natural', response_format: 'b64_json' });
    expect(data.data![0].revised_prompt).to.equal('A detailed red fox in snow.');
    const stored = await bytesOf(await fetch(data.data![0].url!));
    expect(stored.equals(upstreamPng)).to.equal(true);
    expect(response.headers.get('x-credits-used')).to.equal('12');
  });

  it('dall-e-2: fetches an image the upstream answered by URL, and serves b64_json', async () => {
    fake.on('POST /v1/images/generations', (req) => ({ json: { created: 1700000000, data: [{ url: `${fake.url}/files/generated.png?sig=abc` }] } }));
    fake.on('GET /files/generated.png', { headers: { 'content-type': 'image/png' }, body: upstreamPng });
    const result = await tenant.client.images.generate({ model: 'dall-e-2', prompt: 'a cat', size: '256x256', response_format: 'b64_json' });
    expect(Buffer.from(result.data![0].b64_json!, 'base64').equals(upstreamPng)).to.equal(true);
    expect(fake.received('GET /files/generated.png')).to.have.length(1);
  });

  it('gpt-image-1: always answers b64_json, with the upstream usage and options', async () => {
    fake.on('POST /v1/images/generations', {
      json: {
        created: 1700000000, background: 'opaque', output_format: 'png', quality: 'low', size: '1024x1024',
        data: [{ b64_json: upstreamPng.toString('base64') }],
        usage: { input_tokens: 12, output_tokens: 272, total_tokens: 284, input_tokens_details: { text_tokens: 12, image_tokens: 0 } },
      },
    });
    const { data, response } = await tenant.client.images.generate({ model: 'gpt-image-1', prompt: 'a logo', quality: 'low', size: '1024x1024', background: 'opaque' }).withResponse();
    const [sent] = fake.received('POST /v1/images/generations');
    expect(sent.json).to.include({ model: 'gpt-image-1', prompt: 'a logo', n: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', moderation: 'auto' });
    expect(sent.json).to.not.have.property('response_format');
    expect(isPng(Buffer.from(data.data![0].b64_json!, 'base64'))).to.equal(true);
    expect(data.usage).to.deep.include({ input_tokens: 12, output_tokens: 272, total_tokens: 284 });
    expect(data).to.include({ output_format: 'png', quality: 'low', size: '1024x1024', background: 'opaque' });
    expect(response.headers.get('x-credits-used')).to.equal('1.1');
  });

  it('gpt-image-1 edit: forwards the images as image[] and the mask as multipart', async () => {
    fake.on('POST /v1/images/edits', { json: { created: 1700000000, data: [{ b64_json: upstreamPng.toString('base64') }], usage: { input_tokens: 300, output_tokens: 272, total_tokens: 572 } } });
    const [first, second, mask] = await Promise.all([pngImage(16, 16), pngImage(16, 16, { r: 1, g: 2, b: 3, alpha: 1 }), pngImage(16, 16, { r: 0, g: 0, b: 0, alpha: 0 })]);
    const result = await tenant.client.images.edit({
      model: 'gpt-image-1', prompt: 'combine them', input_fidelity: 'high', quality: 'medium', size: '1024x1536',
      image: [await toFile(first, 'first.png', { type: 'image/png' }), await toFile(second, 'second.png', { type: 'image/png' })],
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
    });
    const [sent] = fake.received('POST /v1/images/edits');
    expect(sent.headers.authorization).to.equal('Bearer test');
    const form = await parseMultipart(sent);
    expect(form.fields).to.include({ model: 'gpt-image-1', prompt: 'combine them', n: '1', size: '1024x1536', quality: 'medium', input_fidelity: 'high' });
    const images = form.files.filter((f) => f.field === 'image[]');
    expect(images.map((f) => f.filename)).to.deep.equal(['first.png', 'second.png']);
    expect(images[0].data.equals(first)).to.equal(true);
    expect(images[1].data.equals(second)).to.equal(true);
    const sentMask = form.files.find((f) => f.field === 'mask')!;
    expect(sentMask.data.equals(mask)).to.equal(true);
    expect(sentMask.mediaType).to.equal('image/png');
    expect(Buffer.from(result.data![0].b64_json!, 'base64').equals(upstreamPng)).to.equal(true);
    expect((result as unknown as { credits_used: number }).credits_used).to.equal(6.3); // medium, non-square
  });

  it('tts-1: sends the speech request and streams the upstream audio back with its content type', async () => {
    const flac = Buffer.concat([Buffer.from('fLaC', 'latin1'), Buffer.alloc(2000, 9)]);
    fake.on('POST /v1/audio/speech', { headers: { 'content-type': 'audio/flac' }, body: flac });
    const input = 'Read this aloud, please.';
    const response = await tenant.client.audio.speech.create({ model: 'tts-1', voice: 'coral', input, response_format: 'flac', speed: 1.25 });
    const [sent] = fake.received('POST /v1/audio/speech');
    expect(sent.headers.authorization).to.equal('Bearer test');
    expect(sent.json).to.deep.equal({ model: 'tts-1', input, voice: 'coral', response_format: 'flac', speed: 1.25 });
    expect(response.headers.get('content-type')).to.equal('audio/flac');
    expect(Buffer.from(await response.arrayBuffer()).equals(flac)).to.equal(true);
    expect(response.headers.get('x-credits-used')).to.equal(String((input.length * 1500) / 1e6));
  });

  it('gpt-4o-mini-tts: bills the measured length of the produced audio', async () => {
    fake.on('POST /v1/audio/speech', { headers: { 'content-type': 'audio/wav' }, body: wavOf(1.5) });
    const response = await tenant.client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'marin', input: 'Hi', response_format: 'wav', instructions: 'Cheerful.' });
    expect(fake.received('POST /v1/audio/speech')[0].json).to.include({ model: 'gpt-4o-mini-tts', instructions: 'Cheerful.' });
    expect(response.headers.get('x-credits-used')).to.equal('0.0375'); // 1.5 s at 0.025 credits a second
  });

  it('whisper-1: uploads the audio as multipart, asks for verbose JSON and answers the format the client chose', async () => {
    fake.on('POST /v1/audio/transcriptions', {
      json: {
        task: 'transcribe', language: 'english', duration: 3.25, text: 'Hello world from the fake.',
        segments: [{ id: 0, seek: 0, start: 0, end: 1.5, text: ' Hello world' }, { id: 1, seek: 0, start: 1.5, end: 3.25, text: ' from the fake.' }],
      },
    });
    const audio = wavOf(3.25);
    const response = await tenant.client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(audio, 'talk.wav'), response_format: 'srt', language: 'en', prompt: 'A greeting.' }).asResponse();
    const [sent] = fake.received('POST /v1/audio/transcriptions');
    expect(sent.headers.authorization).to.equal('Bearer test');
    const form = await parseMultipart(sent);
    expect(form.fields).to.deep.equal({ model: 'whisper-1', response_format: 'verbose_json', language: 'en', prompt: 'A greeting.', temperature: '0' });
    expect(form.files).to.have.length(1);
    expect(form.files[0]).to.include({ field: 'file', filename: 'talk.wav', mediaType: 'audio/wav' });
    expect(form.files[0].data.equals(audio)).to.equal(true);
    expect(await response.text()).to.equal('1\n00:00:00,000 --> 00:00:01,500\nHello world\n\n2\n00:00:01,500 --> 00:00:03,250\nfrom the fake.\n');
    expect(response.headers.get('x-credits-used')).to.equal('0.0325');
  });

  it('passes an upstream caller error through without charging', async () => {
    fake.on('POST /v1/images/generations', { status: 400, json: { error: { message: 'Your request was rejected by the safety system.', type: 'invalid_request_error', code: 'content_policy_violation', param: null } } });
    const t = await gateway.newTenant({ credits: 20 });
    const err = await t.client.images.generate({ model: 'dall-e-3', prompt: 'something refused' }).catch((e) => e);
    expect(err.status).to.equal(400);
    expect(err.message).to.include('safety system');
    const rows = await gateway.runtime.db('credit_ledger').where({ request_id: err.requestID }).orderBy('id').pluck('kind');
    expect(rows).to.deep.equal(['reserve', 'refund']);
  });
});
