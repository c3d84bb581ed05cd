import { expect } from 'chai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

/** The Vercel AI SDK's default OpenAI provider (`openai('model')` calls POST /v1/responses). */
describe('POST /v1/responses through the Vercel AI SDK', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let openai: ReturnType<typeof createOpenAI>;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 100 });
    openai = createOpenAI({ baseURL: `${gateway.url}/v1`, apiKey: tenant.key });
  });
  after(() => gateway?.stop());

  async function usageRecord(requestId: string) {
    return gateway.runtime.db('usage_records').where({ request_id: requestId }).first();
  }

  it('generateText', async () => {
    const result = await generateText({ model: openai('sim-chat'), system: 'You are terse.', prompt: 'Hello from the AI SDK' });
    expect(result.text).to.contain('Simulated reply to "Hello from the AI SDK"');
    expect(result.text).to.contain('The conversation holds 2 messages.');
    expect(result.finishReason).to.equal('stop');
    expect(result.usage.inputTokens).to.be.greaterThan(0);
    expect(result.usage.outputTokens).to.be.greaterThan(0);
    expect(result.response.id).to.match(/^resp_/);
    const headers = result.response.headers!;
    expect(headers['x-model-used']).to.equal('sim-chat');
    expect(Number(headers['x-credits-used'])).to.be.greaterThan(0);
    expect(await usageRecord(headers['x-request-id'])).to.include({ endpoint: 'responses', status: 'succeeded' });
  });

  it('streamText', async () => {
    const result = streamText({ model: openai('sim-chat'), prompt: 'Stream a few words from the AI SDK' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).to.contain('Simulated reply to "Stream a few words from the AI SDK"');
    expect(await result.text).to.equal(text);
    expect(await result.finishReason).to.equal('stop');
    expect((await result.usage).outputTokens).to.be.greaterThan(0);
    const response = await result.response;
    expect(response.id).to.match(/^resp_/);
    const stored = await tenant.client.responses.retrieve(response.id);
    expect(stored.output_text).to.equal(text);
  });

  it('generateObject with a zod schema', async () => {
    const schema = z.object({ name: z.string(), age: z.number().int(), tags: z.array(z.string()) });
    const { object, finishReason } = await generateObject({ model: openai('sim-chat'), schema, prompt: 'Invent a person.' });
    expect(finishReason).to.equal('stop');
    expect(schema.parse(object)).to.deep.equal(object);
  });

  it('calls a tool and answers with its result over several steps', async () => {
    const calls: string[] = [];
    const weather = tool({
      description: 'The weather in a city.',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return { city, temperature: 21 };
      },
    });
    const result = await generateText({ model: openai('sim-chat'), tools: { weather }, stopWhen: stepCountIs(3), prompt: 'What is the weather in Paris?' });
    expect(result.steps).to.have.length(2);
    expect(result.steps[0].finishReason).to.equal('tool-calls');
    expect(result.steps[0].toolCalls[0].toolName).to.equal('weather');
    expect(calls).to.have.length(1);
    expect(result.steps[1].finishReason).to.equal('stop');
    expect(result.text).to.contain('Based on weather, which returned');
    expect(result.text).to.contain('"temperature":21');
  });

  it('streams tool calls over several steps', async () => {
    const result = streamText({
      model: openai('sim-chat'),
      tools: { lookup: tool({ inputSchema: z.object({ term: z.string() }), execute: async ({ term }) => `definition of ${term}` }) },
      stopWhen: stepCountIs(3),
      prompt: 'Define gateway',
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    const steps = await result.steps;
    expect(steps).to.have.length(2);
    expect(steps[0].toolCalls[0].toolName).to.equal('lookup');
    expect(text).to.contain('Based on lookup, which returned "definition of');
  });

  it('continues a conversation from the messages of an earlier result (sent as item references)', async () => {
    const first = await generateText({ model: openai('sim-chat'), prompt: 'Remember the word kiwi.' });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Remember the word kiwi.' }, ...first.response.messages, { role: 'user', content: 'Which word?' }];
    const second = await generateText({ model: openai('sim-chat'), messages });
    expect(second.text).to.contain('The conversation holds 3 messages.');
    const items = await tenant.client.responses.inputItems.list(second.response.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'message', 'message']);
    expect(items.data[1]).to.deep.include({ role: 'assistant', id: (first.response.body as { output: Array<{ id: string }> }).output[0].id });
  });
});
