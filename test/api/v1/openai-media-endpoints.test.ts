import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { useFakeOpenAIGateway } from '../../support/suite-gateway';
import { bytesOf, isPng, pngImage } from '../../support/media';
import { readBoxes } from '../../support/mp4-boxes';
import { parseMultipart } from '../../providers/openai-compatible/multipart';

const SPOKEN = 'Good morning and welcome to the simulated broadcast';

describe('POST /v1/images/variations, POST /v1/audio/translations and OpenAI\'s /v1/videos', function () {
  this.timeout(180_000);
  const env = useFakeOpenAIGateway({ providerOverrides: { simulated: { headers: { 'x-sim-video-ms': '1500' } } } });
  let wav: Buffer;
  before(async () => {
    wav = await env.speech(SPOKEN);
  });

  async function errorOf(res: Response): Promise<{ param: string | null; code: string | null }> {
    return ((await res.json()) as { error: { param: string | null; code: string | null } }).error;
  }

  describe('image variations', () => {
    it('makes n variations of an uploaded image at the asked size, through the official client', async () => {
      const source = await pngImage(64, 32);
      const { data, response } = await env.tenant.client.images.createVariation({
        model: 'sim-image', image: await toFile(source, 'cat.png', { type: 'image/png' }), n: 2, size: '256x256', response_format: 'b64_json',
      }).withResponse();
      expect(data.data).to.have.length(2);
      const [a, b] = data.data!.map((d) => Buffer.from(d.b64_json!, 'base64'));
      expect(isPng(a)).to.equal(true);
      expect(a.equals(b)).to.equal(false);
      const meta = await sharp(a).metadata();
      expect([meta.width, meta.height]).to.deep.equal([256, 256]);
      expect(data.data![0]).to.not.have.property('revised_prompt');
      expect(response.headers.get('x-model-used')).to.equal('sim-image');
      expect(Number(response.headers.get('x-credits-used'))).to.be.greaterThan(0);
    });

    it('sends dall-e-2 variations upstream as OpenAI\'s multipart form, keeping the result in our bucket', async () => {
      const upstreamPng = await pngImage(8, 8, { r: 0, g: 200, b: 0, alpha: 1 });
      env.fake.on('POST /v1/images/variations', { json: { created: 1, data: [{ b64_json: upstreamPng.toString('base64') }] } });
      const source = await pngImage(32, 32);
      const data = await env.tenant.client.images.createVariation({ model: 'dall-e-2', image: await toFile(source, 'in.png', { type: 'image/png' }), size: '512x512' });
      const [sent] = env.fake.received('POST /v1/images/variations');
      const form = await parseMultipart(sent);
      expect(form.fields).to.deep.include({ model: 'dall-e-2', n: '1', size: '512x512', response_format: 'b64_json' });
      expect(form.files.map((f) => f.field)).to.deep.equal(['image']);
      expect(form.files[0].data.equals(source)).to.equal(true);
      expect((await bytesOf(await fetch(data.data![0].url!))).equals(upstreamPng)).to.equal(true);
    });

    it('refuses a model without variations, a prompt, and a missing image', async () => {
      const image = await toFile(await pngImage(16, 16), 'a.png', { type: 'image/png' });
      try {
        await env.tenant.client.images.createVariation({ model: 'dall-e-3', image });
        expect.fail('dall-e-3 makes no variations');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.BadRequestError);
        expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('model_not_supported');
      }
      const withPrompt = new FormData();
      withPrompt.append('model', 'sim-image');
      withPrompt.append('prompt', 'no prompts here');
      withPrompt.append('image', new Blob([await pngImage(16, 16)], { type: 'image/png' }), 'a.png');
      expect(await errorOf(await env.tenant.fetch('/v1/images/variations', { method: 'POST', body: withPrompt }))).to.include({ param: 'prompt', code: 'unknown_parameter' });
      const noImage = new FormData();
      noImage.append('model', 'sim-image');
      expect(await errorOf(await env.tenant.fetch('/v1/images/variations', { method: 'POST', body: noImage }))).to.include({ param: 'image', code: 'missing_required_parameter' });
    });
  });

  describe('harmless client defaults', () => {
    it('takes what LangChain\'s DALL-E wrapper sends to dall-e-2 (style, quality standard) and leaves it out upstream', async () => {
      env.fake.on('POST /v1/images/generations', { json: { created: 1, data: [{ b64_json: (await pngImage(8, 8)).toString('base64') }] } });
      await env.tenant.client.images.generate({ model: 'dall-e-2', prompt: 'a cat', n: 1, size: '256x256', response_format: 'url', style: 'vivid', quality: 'standard' });
      expect(env.fake.received('POST /v1/images/generations')[0].json).to.deep.equal({ model: 'dall-e-2', prompt: 'a cat', n: 1, size: '256x256', response_format: 'b64_json' });
      const hd = await env.tenant.fetch('/v1/images/generations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'dall-e-2', prompt: 'a cat', quality: 'hd' }) });
      expect(hd.status).to.equal(400);
      expect(await errorOf(hd)).to.include({ param: 'quality', code: 'unsupported_parameter' });
    });
  });

  describe('audio translations', () => {
    it('turns speech into English text, as json and verbose_json', async () => {
      const { data, response } = await env.tenant.client.audio.translations.create({ model: 'sim-transcribe', file: await toFile(wav, 'talk.wav') }).withResponse();
      expect(data.text).to.equal(SPOKEN);
      expect(Number(response.headers.get('x-credits-used'))).to.be.greaterThan(0);
      const verbose = await env.tenant.client.audio.translations.create({ model: 'sim-transcribe', file: await toFile(wav, 'talk.wav'), response_format: 'verbose_json' });
      expect(verbose).to.include({ task: 'translate', language: 'english', text: SPOKEN });
      expect((verbose as unknown as { segments: unknown[] }).segments.length).to.be.greaterThan(0);
      const srt = await env.tenant.client.audio.translations.create({ model: 'sim-transcribe', file: await toFile(wav, 'talk.wav'), response_format: 'srt' });
      expect(String(srt)).to.match(/^1\n00:00:00,000 --> /);
    });

    it('sends whisper-1 translations to OpenAI\'s /audio/translations', async () => {
      env.fake.on('POST /v1/audio/translations', { json: { task: 'translate', language: 'english', duration: 2.5, text: 'Hello there.', segments: [] } });
      const data = await env.tenant.client.audio.translations.create({ model: 'whisper-1', file: await toFile(wav, 'talk.wav'), prompt: 'greeting', temperature: 0.2 });
      expect(data.text).to.equal('Hello there.');
      const form = await parseMultipart(env.fake.received('POST /v1/audio/translations')[0]);
      expect(form.fields).to.deep.equal({ model: 'whisper-1', response_format: 'verbose_json', prompt: 'greeting', temperature: '0.2' });
    });

    it('refuses models that do not translate, and transcription-only fields', async () => {
      const gpt = new FormData();
      gpt.append('model', 'gpt-4o-transcribe');
      gpt.append('file', new Blob([wav], { type: 'audio/wav' }), 'a.wav');
      expect(await errorOf(await env.tenant.fetch('/v1/audio/translations', { method: 'POST', body: gpt }))).to.include({ param: 'model', code: 'model_not_supported' });
      const language = new FormData();
      language.append('model', 'sim-transcribe');
      language.append('language', 'fr');
      language.append('file', new Blob([wav], { type: 'audio/wav' }), 'a.wav');
      expect(await errorOf(await env.tenant.fetch('/v1/audio/translations', { method: 'POST', body: language }))).to.include({ param: 'language', code: 'unknown_parameter' });
      expect(env.fake.requests).to.have.length(0);
    });
  });

  describe('videos (OpenAI\'s shape of the durable video jobs)', () => {
    async function completed(id: string) {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        const video = await env.tenant.client.videos.retrieve(id);
        if (video.status === 'completed' || video.status === 'failed') return video;
      }
      throw new Error(`video ${id} did not finish`);
    }

    it('creates, polls, downloads, lists and deletes a video with the official client', async () => {
      const created = await env.tenant.client.videos.create({ model: 'sim-video', prompt: 'a kite', seconds: '4' as never, size: '640x360' as never });
      expect(created).to.include({ object: 'video', status: 'queued', model: 'sim-video', prompt: 'a kite', seconds: '4', size: '640x360', progress: 0, completed_at: null, error: null });
      const video = await completed(created.id);
      expect(video).to.include({ status: 'completed', progress: 100, model_used: 'sim-video' } as never);
      expect(video.completed_at).to.be.a('number');

      const content = await env.tenant.client.videos.downloadContent(video.id);
      expect(content.headers.get('content-type')).to.equal('video/mp4');
      const mp4 = Buffer.from(await content.arrayBuffer());
      expect(readBoxes(mp4).map((b) => b.type)).to.include.members(['ftyp', 'moov', 'mdat']);

      const listed: string[] = [];
      for await (const item of env.tenant.client.videos.list({ limit: 1 })) listed.push(item.id);
      expect(listed).to.include(video.id);

      const stored = `videos/${env.tenant.workspaceId}/${video.id}/0.mp4`;
      expect(await env.gateway.runtime.storage.exists(stored)).to.equal(true);
      expect(await env.tenant.client.videos.delete(video.id)).to.deep.equal({ id: video.id, object: 'video.deleted', deleted: true });
      expect(await env.gateway.runtime.storage.exists(stored)).to.equal(false);
      try {
        await env.tenant.client.videos.retrieve(video.id);
        expect.fail('a deleted video is gone');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.NotFoundError);
      }
    });

    it('takes the reference image as an upload (multipart), and shows jobs of either shape', async () => {
      const png = await pngImage(32, 18);
      const created = await env.tenant.client.videos.create({ model: 'sim-video', prompt: 'animate', seconds: '2' as never, input_reference: await toFile(png, 'ref.png', { type: 'image/png' }) });
      expect(created.size).to.equal('854x480');
      const stored = await env.gateway.runtime.storage.getBuffer(`videos/${env.tenant.workspaceId}/${created.id}/reference`);
      expect(stored.equals(png)).to.equal(true);
      expect((await completed(created.id)).status).to.equal('completed');
      // One job, two shapes.
      const generation = (await (await env.tenant.fetch(`/v1/videos/generations/${created.id}`)).json()) as { object: string; status: string };
      expect(generation).to.include({ object: 'video.generation', status: 'succeeded' });
    });

    it('names OpenAI\'s fields in refusals, and refuses content that is not ready', async () => {
      const post = (body: unknown) => env.tenant.fetch('/v1/videos', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(await errorOf(await post({ model: 'sim-video', prompt: 'x', seconds: '3' }))).to.include({ param: 'seconds', code: 'invalid_value' });
      expect(await errorOf(await post({ model: 'sim-video', prompt: 'x', size: '1920x1080' }))).to.include({ param: 'size', code: 'invalid_value' });
      expect(await errorOf(await post({ model: 'sim-video', prompt: 'x', input_reference: { file_id: 'file_nope' } }))).to.include({ param: 'input_reference.file_id', code: 'file_not_found' });
      const queued = (await (await post({ model: 'sim-video', prompt: 'slowly', seconds: 2 })).json()) as { id: string };
      const early = await env.tenant.fetch(`/v1/videos/${queued.id}/content`);
      expect(early.status).to.equal(400);
      expect((await errorOf(early)).code).to.equal('video_not_ready');
      expect((await errorOf(await env.tenant.fetch(`/v1/videos/${queued.id}`, { method: 'DELETE' }))).code).to.equal('video_in_progress');
      const other = await env.gateway.newTenant({ credits: 1 });
      expect((await other.fetch(`/v1/videos/${queued.id}`)).status).to.equal(404);
      await completed(queued.id);
    });
  });
});
