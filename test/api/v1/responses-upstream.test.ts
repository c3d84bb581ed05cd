import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeUpstream } from '../../support/fake-upstream';
import { weatherTool } from '../../support/responses';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';

function completion(message: Record<string, unknown>, finishReason: string, usage = { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 }) {
  return { id: 'chatcmpl-up', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }], usage };
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null) {
  return { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** The Responses request reaches real providers as the chat request their adapters speak. */
describe('POST /v1/responses through provider adapters (fake upstreams)', function () {
  this.timeout(120_000);
  const openaiUpstream = new FakeUpstream();
  const anthropicUpstream = new FakeUpstream();
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    await openaiUpstream.start();
    await anthropicUpstream.start();
    gateway = await startTestGateway({
      env: { OPENAI_BASE_URL: `${openaiUpstream.url}/v1`, OPENAI_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: anthropicUpstream.url, ANTHROPIC_API_KEY: 'sk-ant' },
    });
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(async () => {
    await gateway?.stop();
    await openaiUpstream.stop();
    await anthropicUpstream.stop();
  });
  beforeEach(() => {
    openaiUpstream.reset();
    anthropicUpstream.reset();
  });

  it('OpenAI: sends instructions, tools and settings as chat completions, then the function output with previous_response_id', async () => {
    openaiUpstream.sequence('POST /v1/chat/completions', [
      { json: completion({ content: null, tool_calls: [{ id: 'call_up1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, 'tool_calls') },
      { json: completion({ content: '{"summary":"Mild, 21 degrees."}' }, 'stop', { prompt_tokens: 60, completion_tokens: 9, total_tokens: 69 }) },
    ]);
    const first = await tenant.client.responses.create({
      model: 'gpt-4o-mini', instructions: 'Answer about weather.', input: 'Weather in Paris?', tools: [weatherTool],
      tool_choice: { type: 'function', name: 'get_weather' }, temperature: 0.2, top_p: 0.9, max_output_tokens: 200, parallel_tool_calls: false, user: 'user-7',
    });
    const [sent] = openaiUpstream.received('POST /v1/chat/completions');
    expect(sent.headers.authorization).to.equal('Bearer sk-up');
    expect(sent.json.messages).to.deep.equal([{ role: 'system', content: 'Answer about weather.' }, { role: 'user', content: 'Weather in Paris?' }]);
    expect(sent.json.tools).to.deep.equal([{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city.', parameters: weatherTool.parameters, strict: true } }]);
    expect(sent.json).to.deep.include({ model: 'gpt-4o-mini', tool_choice: { type: 'function', function: { name: 'get_weather' } }, temperature: 0.2, top_p: 0.9, parallel_tool_calls: false, user: 'user-7' });
    expect(sent.json.max_completion_tokens ?? sent.json.max_tokens).to.equal(200);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).to.include({ type: 'function_call', call_id: 'call_up1', name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(first.usage).to.deep.include({ input_tokens: 30, output_tokens: 8, total_tokens: 38 });

    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'], additionalProperties: false };
    const second = await tenant.client.responses.create({
      model: 'gpt-4o-mini', previous_response_id: first.id, tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: 'call_up1', output: '{"temperature":21}' }],
      text: { format: { type: 'json_schema', name: 'summary', schema, strict: true } },
    });
    const followUp = openaiUpstream.received('POST /v1/chat/completions')[1];
    // Instructions are not carried over from the previous response, as with OpenAI.
    expect(followUp.json.messages).to.deep.equal([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_up1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_up1', content: '{"temperature":21}' },
    ]);
    expect(followUp.json.response_format).to.deep.equal({ type: 'json_schema', json_schema: { name: 'summary', schema, strict: true } });
    expect(second.output_text).to.equal('{"summary":"Mild, 21 degrees."}');
    expect(second.usage).to.deep.include({ input_tokens: 60, output_tokens: 9 });
  });

  it('OpenAI: streams the upstream chunks as Responses events with the upstream usage', async () => {
    openaiUpstream.on('POST /v1/chat/completions', {
      sse: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'),
        { id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }, '[DONE]'],
    });
    const stream = tenant.client.responses.stream({ model: 'gpt-4o-mini', input: 'hi' });
    const deltas: string[] = [];
    for await (const event of stream) if (event.type === 'response.output_text.delta') deltas.push(event.delta);
    const final = await stream.finalResponse();
    expect(deltas).to.deep.equal(['Hel', 'lo']);
    expect(final.output_text).to.equal('Hello');
    expect(final.usage).to.deep.include({ input_tokens: 9, output_tokens: 2, total_tokens: 11 });
    expect(openaiUpstream.received('POST /v1/chat/completions')[0].json).to.include({ stream: true });
  });

  it('Anthropic: the Messages API gets the system prompt, the turns and the tools', async () => {
    anthropicUpstream.on('POST /v1/messages', {
      json: {
        id: 'msg_up', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'text', text: 'It is sunny.' }], stop_reason: 'end_turn', stop_sequence: null,
        usage: { input_tokens: 40, output_tokens: 5 },
      },
    });
    const { data, response } = await tenant.client.responses.create({
      model: 'claude-sonnet-4-5', instructions: 'Be brief.', max_output_tokens: 100, tools: [weatherTool],
      input: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: 'Which city?' }, { role: 'user', content: [{ type: 'input_text', text: 'Paris' }] }],
    }).withResponse();
    const [sent] = anthropicUpstream.received('POST /v1/messages');
    expect(sent.json.system).to.satisfy((system: unknown) => JSON.stringify(system).includes('Be brief.'));
    expect(sent.json.max_tokens).to.equal(100);
    expect(sent.json.messages.map((m: { role: string }) => m.role)).to.deep.equal(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent.json.messages[2])).to.contain('Paris');
    expect(sent.json.tools[0]).to.include({ name: 'get_weather', description: 'The weather in a city.' });
    expect(data.output_text).to.equal('It is sunny.');
    expect(data.usage).to.deep.include({ input_tokens: 40, output_tokens: 5 });
    expect(response.headers.get('x-model-used')).to.equal('claude-sonnet-4-5');
  });
});
