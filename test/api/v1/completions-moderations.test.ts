import { expect } from 'chai';
import OpenAI from 'openai';
import { useFakeOpenAIGateway } from '../../support/suite-gateway';
import { pngImage } from '../../support/media';
import openaiCompletion from '../../providers/openai-compatible/fixtures/chat-completion.json';

describe('POST /v1/completions and POST /v1/moderations', function () {
  this.timeout(120_000);
  const env = useFakeOpenAIGateway();

  async function post(path: string, body: unknown): Promise<{ status: number; json: any }> {
    const res = await env.tenant.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json() };
  }

  describe('completions (served by chat models)', () => {
    it('answers a prompt as a text_completion through the official client, charged like the chat call', async () => {
      const { data, response } = await env.tenant.client.completions.create({ model: 'sim-chat', prompt: 'Say something', max_tokens: 200 }).withResponse();
      const chat = await env.tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'Say something' }], max_tokens: 200 });
      expect(data.object).to.equal('text_completion');
      expect(data.id).to.match(/^cmpl-/);
      expect(data.choices).to.deep.equal([{ text: chat.choices[0].message.content, index: 0, logprobs: null, finish_reason: 'stop' }]);
      expect(data.usage).to.deep.equal(chat.usage);
      expect(Number(response.headers.get('x-credits-used'))).to.equal((chat as unknown as { credits_used: number }).credits_used);
      expect(response.headers.get('x-model-used')).to.equal('sim-chat');
    });

    it('stops at OpenAI\'s default of 16 tokens when max_tokens is not set', async () => {
      const data = await env.tenant.client.completions.create({ model: 'sim-chat', prompt: 'Tell me a long story about the sea' });
      expect(data.choices[0].finish_reason).to.equal('length');
      expect(data.usage!.completion_tokens).to.equal(16);
    });

    it('numbers the choices of several prompts prompt by prompt, and echoes the prompt when asked', async () => {
      const data = await env.tenant.client.completions.create({ model: 'sim-chat', prompt: ['First', 'Second'], n: 2, max_tokens: 100, echo: true });
      expect(data.choices.map((c) => c.index)).to.deep.equal([0, 1, 2, 3]);
      expect(data.choices.map((c) => c.text.slice(0, c.text.indexOf('Simulated')))).to.deep.equal(['First', 'First', 'Second', 'Second']);
      expect(data.choices[0].text).to.not.equal(data.choices[1].text);
    });

    it('gives legacy logprobs: tokens, their log probabilities, the top alternatives and text offsets', async () => {
      const data = await env.tenant.client.completions.create({ model: 'sim-chat', prompt: 'Hi', max_tokens: 100, logprobs: 2 });
      const { text, logprobs } = data.choices[0];
      expect(logprobs!.tokens!.join('')).to.equal(text);
      expect(logprobs!.token_logprobs).to.have.length(logprobs!.tokens!.length);
      expect(Object.keys(logprobs!.top_logprobs![0])).to.have.length(2);
      expect(logprobs!.text_offset![1]).to.equal(logprobs!.tokens![0].length);
    });

    it('sends the prompt to a real upstream as a chat message', async () => {
      env.fake.on('POST /v1/chat/completions', { json: openaiCompletion });
      const data = await env.tenant.client.completions.create({ model: 'gpt-4o', prompt: 'Hello', max_tokens: 5, temperature: 0.3 });
      expect(data.choices[0].text).to.equal('Hello! How can I assist you today?');
      expect(env.fake.received('POST /v1/chat/completions')[0].json).to.deep.equal({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 5, temperature: 0.3 });
    });

    it('replays an Idempotency-Key and falls back along the workspace\'s chain, as chat does', async () => {
      const send = () => env.tenant.fetch('/v1/completions', {
        method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'completion-once' },
        body: JSON.stringify({ model: 'sim-chat', prompt: 'Once only', max_tokens: 20 }),
      });
      const first = await send();
      const again = await send();
      expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
      expect(await again.json()).to.deep.equal(await first.json());
      const { setFallbackChain } = await import('../../../domain/workspaces');
      await setFallbackChain(env.gateway.runtime.db, { workspaceId: env.tenant.workspaceId, sourceModel: 'sim-chat-fail-500', chain: ['sim-chat-mini'], actor: 'test', modalityOf: async () => 'chat' });
      const { response } = await env.tenant.client.completions.create({ model: 'sim-chat-fail-500', prompt: 'Fall back', max_tokens: 20 }).withResponse();
      expect(response.headers.get('x-model-used')).to.equal('sim-chat-mini');
      expect(response.headers.get('x-fallback-from')).to.equal('sim-chat-fail-500');
    });

    it('refuses what a chat model cannot do, by name', async () => {
      expect((await post('/v1/completions', { model: 'sim-chat', prompt: 'a', suffix: 'b' })).json.error).to.include({ param: 'suffix', code: 'unsupported_parameter' });
      expect((await post('/v1/completions', { model: 'sim-chat', prompt: [1, 2, 3] })).json.error).to.include({ param: 'prompt', code: 'unsupported_value' });
      expect((await post('/v1/completions', { model: 'sim-chat', prompt: 'a', best_of: 3 })).json.error).to.include({ param: 'best_of' });
      expect((await post('/v1/completions', { model: 'sim-chat', prompt: 'a', stream: true })).json.error).to.include({ param: 'stream' });
      expect((await post('/v1/completions', { model: 'claude-sonnet-4-5', prompt: 'a', logprobs: 1 })).json.error).to.include({ param: 'logprobs', code: 'unsupported_parameter' });
      const embedding = await post('/v1/completions', { model: 'sim-embed', prompt: 'a' });
      expect(embedding.status).to.equal(400);
      expect(embedding.json.error.code).to.equal('model_modality_mismatch');
    });
  });

  describe('moderations', () => {
    it('classifies texts with the simulated model in OpenAI\'s categories, each input its own result', async () => {
      const { data, response } = await env.tenant.client.moderations.create({ model: 'sim-moderation', input: ['I will kill the lights', 'What a lovely day'] }).withResponse();
      expect(data.id).to.match(/^modr-/);
      expect(data.model).to.equal('sim-moderation');
      const [violent, calm] = data.results;
      expect(violent.flagged).to.equal(true);
      expect(violent.categories.violence).to.equal(true);
      expect(violent.category_scores.violence).to.be.above(0.5);
      expect(calm.flagged).to.equal(false);
      expect(Object.keys(calm.categories)).to.have.length(13);
      expect(calm.category_applied_input_types!.violence).to.deep.equal(['text']);
      expect(Number(response.headers.get('x-credits-used'))).to.be.greaterThan(0);
    });

    it('judges an image given with text (a red picture reads as graphic violence)', async () => {
      const red = (await pngImage(16, 16, { r: 220, g: 10, b: 10, alpha: 1 })).toString('base64');
      const data = await env.tenant.client.moderations.create({
        model: 'sim-moderation',
        input: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${red}` } }],
      });
      expect(data.results).to.have.length(1);
      expect(data.results[0].categories['violence/graphic']).to.equal(true);
      expect(data.results[0].category_applied_input_types!['violence/graphic']).to.deep.equal(['text', 'image']);
    });

    it('uses OpenAI\'s omni-moderation-latest when no model is named, free of charge', async () => {
      const result = { flagged: false, categories: { hate: false }, category_scores: { hate: 0.0001 }, category_applied_input_types: { hate: ['text'] } };
      env.fake.on('POST /v1/moderations', { json: { id: 'modr-upstream', model: 'omni-moderation-2024-09-26', results: [result] } });
      const { data, response } = await env.tenant.client.moderations.create({ input: 'hello' }).withResponse();
      expect(env.fake.received('POST /v1/moderations')[0].json).to.deep.equal({ model: 'omni-moderation-latest', input: ['hello'] });
      expect(data.model).to.equal('omni-moderation-latest');
      expect(data.results).to.deep.equal([result]);
      expect(response.headers.get('x-credits-used')).to.equal('0');
    });

    it('refuses images for the text-only model, and other modalities\' models', async () => {
      const image = await post('/v1/moderations', { model: 'text-moderation-latest', input: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] });
      expect(image.status).to.equal(400);
      expect(image.json.error).to.include({ param: 'input', code: 'image_not_supported_by_model' });
      expect((await post('/v1/moderations', { model: 'sim-chat', input: 'x' })).json.error.code).to.equal('model_modality_mismatch');
      try {
        await env.tenant.client.moderations.create({ model: 'sim-moderation', input: [] as string[] });
        expect.fail('empty input is refused');
      } catch (err) {
        expect(err).to.be.instanceOf(OpenAI.BadRequestError);
      }
      expect(env.fake.requests).to.have.length(0);
    });
  });
});
