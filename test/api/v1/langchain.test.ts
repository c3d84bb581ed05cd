/**
 * LangChain's OpenAI integration (`@langchain/openai`) against the gateway, offline with the simulated
 * models: ChatOpenAI on chat completions and on the Responses API (invoke, stream, bound tools, structured
 * output), OpenAIEmbeddings
 * and the DALL-E wrapper with its defaults (which it sends to every model).
 */
import { expect } from 'chai';
import { ChatOpenAI, DallEAPIWrapper, OpenAIEmbeddings } from '@langchain/openai';
import { z } from 'zod';
import { getBalance } from '../../../domain/ledger';
import { useGateway } from '../../support/suite-gateway';
import { bytesOf, isPng } from '../../support/media';

describe('@langchain/openai against the gateway', function () {
  this.timeout(120_000);
  const env = useGateway({ credits: 50 });

  const chat = (fields: Record<string, unknown> = {}) => new ChatOpenAI({
    model: 'sim-chat', apiKey: env.tenant.key, maxRetries: 0, useResponsesApi: false, configuration: { baseURL: `${env.gateway.url}/v1` }, ...fields,
  });

  it('ChatOpenAI.invoke answers through chat completions, with token usage, and is charged', async () => {
    const before = (await getBalance(env.gateway.runtime.db, env.tenant.workspaceId)).totalMicro;
    const message = await chat().invoke('Say hello to the gateway');
    expect(message.content).to.be.a('string').and.include('Say hello to the gateway');
    expect(message.usage_metadata!.input_tokens).to.be.greaterThan(0);
    expect(message.usage_metadata!.output_tokens).to.be.greaterThan(0);
    expect((await getBalance(env.gateway.runtime.db, env.tenant.workspaceId)).totalMicro).to.be.lessThan(before);
  });

  it('ChatOpenAI.stream yields the answer in chunks that add up to the whole', async () => {
    const whole = await chat().invoke('Stream a few words');
    let text = '';
    let chunks = 0;
    for await (const chunk of await chat().stream('Stream a few words')) {
      text += chunk.content as string;
      chunks++;
    }
    expect(chunks).to.be.greaterThan(2);
    expect(text).to.equal(whole.content);
  });

  it('bindTools: the model calls the bound tool with arguments fitting its schema', async () => {
    const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
    const message = await chat().bindTools([weather]).invoke('What is the weather in Oslo?');
    expect(message.tool_calls).to.have.length(1);
    expect(message.tool_calls![0].name).to.equal('get_weather');
    expect(message.tool_calls![0].args).to.have.property('city').that.is.a('string');
  });

  it('withStructuredOutput returns an object that passes the zod schema', async () => {
    const schema = z.object({ city: z.string(), population: z.number().int(), capital: z.boolean() });
    const result = await chat().withStructuredOutput(schema).invoke('Tell me about Oslo');
    expect(schema.safeParse(result).success, JSON.stringify(result)).to.equal(true);
  });

  describe('with useResponsesApi (POST /v1/responses)', () => {
    const responses = () => chat({ useResponsesApi: true });

    it('invoke answers with token usage, and is charged', async () => {
      const before = (await getBalance(env.gateway.runtime.db, env.tenant.workspaceId)).totalMicro;
      const message = await responses().invoke('Say hello through the Responses API');
      expect(message.text).to.be.a('string').and.include('Say hello through the Responses API');
      expect(message.usage_metadata!.input_tokens).to.be.greaterThan(0);
      expect((await getBalance(env.gateway.runtime.db, env.tenant.workspaceId)).totalMicro).to.be.lessThan(before);
    });

    it('stream yields the answer in chunks that add up to the whole', async () => {
      const whole = await responses().invoke('Stream a few words');
      let text = '';
      let chunks = 0;
      for await (const chunk of await responses().stream('Stream a few words')) {
        text += chunk.text;
        chunks++;
      }
      expect(chunks).to.be.greaterThan(2);
      expect(text).to.equal(whole.text);
    });

    it('bindTools: the model calls the bound tool', async () => {
      const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
      const message = await responses().bindTools([weather]).invoke('What is the weather in Oslo?');
      expect(message.tool_calls).to.have.length(1);
      expect(message.tool_calls![0].name).to.equal('get_weather');
      expect(message.tool_calls![0].args).to.have.property('city').that.is.a('string');
    });

    it('withStructuredOutput returns an object that passes the zod schema', async () => {
      const schema = z.object({ city: z.string(), population: z.number().int(), capital: z.boolean() });
      const result = await responses().withStructuredOutput(schema).invoke('Tell me about Oslo');
      expect(schema.safeParse(result).success, JSON.stringify(result)).to.equal(true);
    });
  });

  it('OpenAIEmbeddings embeds a query and documents, with dimensions', async () => {
    const embeddings = new OpenAIEmbeddings({ model: 'sim-embed', apiKey: env.tenant.key, dimensions: 64, configuration: { baseURL: `${env.gateway.url}/v1` } });
    const query = await embeddings.embedQuery('a quiet lake');
    const docs = await embeddings.embedDocuments(['a quiet lake', 'a loud city']);
    expect(query).to.have.length(64);
    expect(docs).to.have.length(2);
    expect(docs[0]).to.deep.equal(query);
  });

  it('the DALL-E wrapper works with its defaults (style and quality "standard" sent to every model)', async () => {
    const dalle = new DallEAPIWrapper({ model: 'sim-image', apiKey: env.tenant.key, baseUrl: `${env.gateway.url}/v1`, size: '256x256' } as ConstructorParameters<typeof DallEAPIWrapper>[0]);
    const url = await dalle.invoke('a red kite over the sea');
    expect(url).to.be.a('string').and.match(/^http/);
    expect(isPng(await bytesOf(await fetch(url)))).to.equal(true);
  });
});
