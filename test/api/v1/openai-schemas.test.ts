/**
 * The gateway's answers against OpenAI's own component schemas (test/schemas/openai: a vendored subset
 * of OpenAI's published OpenAPI document). Responses are read as raw JSON (not through a client that
 * might forgive them) from every endpoint that has an OpenAI schema; vendor extras such as
 * `credits_used` are allowed, as the schemas do not close their objects.
 */
import Ajv from 'ajv';
import { expect } from 'chai';
import { toFile } from 'openai';
import components from '../../schemas/openai/components.json';
import { useFakeOpenAIGateway } from '../../support/suite-gateway';
import { pngImage } from '../../support/media';

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(components);

function expectValid(component: string, value: unknown): void {
  const validate = ajv.getSchema(`${components.$id}#/components/schemas/${component}`);
  if (!validate) throw new Error(`no component ${component}`);
  const ok = validate(value);
  expect(ok, `${component}: ${ajv.errorsText(validate.errors, { separator: '\n' })}\n${JSON.stringify(value).slice(0, 600)}`).to.equal(true);
}

/** The `data:` payloads of an event stream, with their event names. */
function sseEvents(text: string): Array<{ event?: string; data: string }> {
  return text.split('\n\n').filter((block) => block.trim() && !block.startsWith(':')).map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    return { event, data: lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n') };
  });
}

describe('responses against OpenAI\'s component schemas', function () {
  this.timeout(180_000);
  const env = useFakeOpenAIGateway({ credits: 200, providerOverrides: { simulated: { headers: { 'x-sim-video-ms': '1000' } } } });
  let wav: Buffer;
  before(async () => {
    wav = await env.speech('Schemas all the way down');
  });

  async function json(path: string, init: RequestInit = {}): Promise<any> {
    const res = await env.tenant.fetch(path, init);
    return res.json();
  }
  const post = (path: string, body: unknown) => json(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const upload = (path: string, form: FormData) => json(path, { method: 'POST', body: form });

  it('chat completions: plain, with n and logprobs, and with tool calls; no null system_fingerprint', async () => {
    const plain = await post('/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'Hi' }] });
    expectValid('CreateChatCompletionResponse', plain);
    expect(plain).to.not.have.property('system_fingerprint');
    expectValid('CreateChatCompletionResponse', await post('/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'Hi' }], n: 2, logprobs: true, top_logprobs: 2 }));
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
    const called = await post('/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools });
    expect(called.choices[0].message.tool_calls).to.have.length(1);
    expectValid('CreateChatCompletionResponse', called);
  });

  it('chat completion chunks, text and tool calls, with the usage chunk', async () => {
    for (const extra of [{ logprobs: true, n: 2 }, { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }]) {
      const res = await env.tenant.fetch('/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'Stream it' }], stream: true, stream_options: { include_usage: true }, ...extra }),
      });
      const events = sseEvents(await res.text());
      expect(events.at(-1)!.data).to.equal('[DONE]');
      for (const { data } of events.slice(0, -1)) expectValid('CreateChatCompletionStreamResponse', JSON.parse(data));
    }
  });

  it('legacy completions, with logprobs', async () => {
    expectValid('CreateCompletionResponse', await post('/v1/completions', { model: 'sim-chat', prompt: ['a', 'b'], max_tokens: 30, logprobs: 2 }));
  });

  it('embeddings', async () => {
    expectValid('CreateEmbeddingResponse', await post('/v1/embeddings', { model: 'sim-embed', input: ['one', 'two'] }));
    expectValid('CreateEmbeddingResponse', await post('/v1/embeddings', { model: 'sim-embed', input: [[1, 2, 3]] }));
  });

  it('images: URLs, base64, edits and variations; GPT Image\'s usage with input_tokens_details and no unresolved auto', async () => {
    expectValid('ImagesResponse', await post('/v1/images/generations', { model: 'sim-image', prompt: 'a kite', size: '256x256' }));
    const b64 = await post('/v1/images/generations', { model: 'sim-image', prompt: 'a kite', size: '256x256', response_format: 'b64_json', quality: 'standard' });
    expectValid('ImagesResponse', b64);
    expect(b64).to.not.have.property('quality');
    const png = await pngImage(32, 32);
    const edit = new FormData();
    edit.append('model', 'sim-image');
    edit.append('prompt', 'tint');
    edit.append('image', new Blob([png], { type: 'image/png' }), 'a.png');
    expectValid('ImagesResponse', await upload('/v1/images/edits', edit));
    const variation = new FormData();
    variation.append('model', 'sim-image');
    variation.append('image', new Blob([png], { type: 'image/png' }), 'a.png');
    expectValid('ImagesResponse', await upload('/v1/images/variations', variation));

    env.fake.on('POST /v1/images/generations', {
      json: { created: 1, data: [{ b64_json: png.toString('base64') }], size: '1024x1024', quality: 'medium', background: 'opaque', output_format: 'png', usage: { input_tokens: 12, output_tokens: 272, total_tokens: 284, input_tokens_details: { text_tokens: 12, image_tokens: 0 } } },
    });
    const gpt = await post('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a kite' });
    expectValid('ImagesResponse', gpt);
    expect(gpt).to.include({ quality: 'medium', background: 'opaque', size: '1024x1024', output_format: 'png' });
    expect(gpt.usage.input_tokens_details).to.deep.equal({ text_tokens: 12, image_tokens: 0 });
  });

  it('image stream: only OpenAI\'s completed events (with background and usage), progress as comments', async () => {
    for (const [path, event, form] of [
      ['/v1/images/generations', 'ImageGenCompletedEvent', null],
      ['/v1/images/edits', 'ImageEditCompletedEvent', true],
    ] as const) {
      let init: RequestInit;
      if (form) {
        const body = new FormData();
        for (const [k, v] of Object.entries({ model: 'sim-image', prompt: 'p', response_format: 'b64_json', stream: 'true' })) body.append(k, v);
        body.append('image', new Blob([await pngImage(16, 16)], { type: 'image/png' }), 'a.png');
        init = { method: 'POST', body };
      } else {
        init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-image', prompt: 'p', size: '256x256', response_format: 'b64_json', stream: true }) };
      }
      const text = await (await env.tenant.fetch(path, init)).text();
      expect(text.startsWith(':')).to.equal(true);
      const events = sseEvents(text);
      expect(events.map((e) => e.event).filter(Boolean)).to.deep.equal([form ? 'image_edit.completed' : 'image_generation.completed']);
      const completed = JSON.parse(events[0].data);
      expectValid(event, completed);
      expect(completed.background).to.equal('auto');
    }
  });

  it('transcriptions and translations, json and verbose_json (segments with Whisper\'s decoding fields)', async () => {
    const send = async (path: string, format: string) => {
      const form = new FormData();
      form.append('model', 'sim-transcribe');
      form.append('response_format', format);
      form.append('file', new Blob([wav], { type: 'audio/wav' }), 'a.wav');
      return upload(path, form);
    };
    expectValid('CreateTranscriptionResponseJson', await send('/v1/audio/transcriptions', 'json'));
    const verbose = await send('/v1/audio/transcriptions', 'verbose_json');
    expectValid('CreateTranscriptionResponseVerboseJson', verbose);
    expect(verbose.segments[0]).to.include.keys('seek', 'tokens', 'temperature', 'avg_logprob', 'compression_ratio', 'no_speech_prob');
    expectValid('CreateTranslationResponseJson', await send('/v1/audio/translations', 'json'));
    expectValid('CreateTranslationResponseVerboseJson', await send('/v1/audio/translations', 'verbose_json'));
  });

  it('speech answers audio with its content type', async () => {
    const res = await env.tenant.fetch('/v1/audio/speech', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'sim-tts', voice: 'alloy', input: 'hi' }) });
    expect(res.headers.get('content-type')).to.equal('audio/mpeg');
  });

  it('files: the object, the list (an empty one without null ids), and the deletion', async () => {
    const fresh = await env.gateway.newTenant({ credits: 1 });
    const empty = await (await fresh.fetch('/v1/files')).json();
    expectValid('ListFilesResponse', empty);
    expect(empty).to.include({ first_id: '', last_id: '' });
    const file = await env.tenant.client.files.create({ file: await toFile(Buffer.from('hello'), 'a.txt'), purpose: 'user_data' });
    expectValid('OpenAIFile', await json(`/v1/files/${file.id}`));
    expectValid('ListFilesResponse', await json('/v1/files'));
    expectValid('DeleteFileResponse', await json(`/v1/files/${file.id}`, { method: 'DELETE' }));
  });

  it('models', async () => {
    expectValid('ListModelsResponse', await json('/v1/models'));
    expectValid('Model', await json('/v1/models/sim-chat'));
  });

  it('moderations', async () => {
    expectValid('CreateModerationResponse', await post('/v1/moderations', { model: 'sim-moderation', input: ['kill', 'hello'] }));
  });

  it('videos: the object while queued and once completed, the list, the deletion', async () => {
    const video = await post('/v1/videos', { model: 'sim-video', prompt: 'waves', seconds: '2' });
    expectValid('VideoResource', video);
    let done = video;
    for (const deadline = Date.now() + 60_000; done.status !== 'completed' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      done = await json(`/v1/videos/${video.id}`);
    }
    expectValid('VideoResource', done);
    expectValid('VideoListResource', await json('/v1/videos'));
    expectValid('DeletedVideoResource', await json(`/v1/videos/${video.id}`, { method: 'DELETE' }));
  });

  it('errors, whatever the status', async () => {
    expectValid('ErrorResponse', await post('/v1/chat/completions', { model: 'sim-chat' }));
    expectValid('ErrorResponse', await json('/v1/models/no-such-model'));
    expectValid('ErrorResponse', await (await fetch(`${env.gateway.url}/v1/models`)).json());
    expectValid('ErrorResponse', await json('/v1/models', { method: 'DELETE' }));
  });
});
