/**
 * `POST /v1/messages` against fake upstreams. An Anthropic model is sent the client's request as it came
 * (thinking, cache_control, tool_choice, metadata, top_k, documents by URL, the `anthropic-beta` flags) and
 * answers with its own Message and events, its prompt-cache usage priced at the catalog's cache rates; an
 * OpenAI model is sent the chat translation. Every charge equals the usage records.
 */
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { anthropicClient, expectAnthropicShape, expectChargedAsRecorded, expectValidStream, parseSse } from '../../support/anthropic';

const usage = { input_tokens: 50, output_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 3000, cache_creation: { ephemeral_5m_input_tokens: 800, ephemeral_1h_input_tokens: 200 }, server_tool_use: null, service_tier: 'standard', inference_geo: null };
/** claude-sonnet-4-5 at 300 / 1500 credits per 1M tokens, cache writes 375 (1 hour: 600), reads 30. */
const expectedMicro = 50 * 300 + 800 * 375 + 200 * 600 + 3000 * 30 + 100 * 1500;

const upstreamMessage = {
  id: 'msg_01Upstream', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'thinking', thinking: 'Weighing the question.', signature: 'EqQBCkYIBxgCKkBsig' },
    { type: 'text', text: 'Paris, mostly sunny.', citations: null },
  ],
  stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: null, usage,
};

const request = {
  model: 'claude-sonnet-4-5',
  max_tokens: 4096,
  system: [{ type: 'text', text: 'You forecast weather.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [
    { role: 'user', content: [
      { type: 'document', source: { type: 'url', url: 'https://docs.example.com/climate.pdf' }, title: 'Climate', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Weather in Paris?' },
    ] },
  ],
  thinking: { type: 'enabled', budget_tokens: 2048 },
  tools: [{ name: 'get_weather', description: 'The weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } }, cache_control: { type: 'ephemeral' } }],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  metadata: { user_id: 'user-42' },
  top_k: 40,
  stop_sequences: ['END'],
  service_tier: 'auto',
};

describe('POST /v1/messages against fake upstreams', function () {
  this.timeout(120_000);
  const anthropicUpstream = new FakeUpstream();
  const openaiUpstream = new FakeUpstream();
  let gateway: TestGateway;
  let tenant: Tenant;
  let client: Anthropic;
  before(async function () {
    this.timeout(180_000);
    await anthropicUpstream.start();
    await openaiUpstream.start();
    gateway = await startTestGateway({
      env: { ANTHROPIC_BASE_URL: anthropicUpstream.url, ANTHROPIC_API_KEY: 'sk-ant-up', OPENAI_BASE_URL: `${openaiUpstream.url}/v1`, OPENAI_API_KEY: 'sk-up' },
    });
    tenant = await gateway.newTenant({ credits: 100 });
    client = anthropicClient(gateway.url, tenant.key);
  });
  after(async () => {
    await gateway?.stop();
    await anthropicUpstream.stop();
    await openaiUpstream.stop();
  });
  beforeEach(() => {
    anthropicUpstream.reset();
    openaiUpstream.reset();
  });

  it('an Anthropic model gets the request exactly as sent, with anthropic-beta; the answer is its own, cache tokens priced', async () => {
    anthropicUpstream.on('POST /v1/messages', { json: upstreamMessage });
    const { data: message, response } = await client.messages.create(request as never, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } }).withResponse();
    const [sent] = anthropicUpstream.received('POST /v1/messages');
    expect(sent.json).to.deep.equal({ ...request, model: 'claude-sonnet-4-5-20250929' });
    expect(sent.headers['x-api-key']).to.equal('sk-ant-up');
    expect(sent.headers['anthropic-version']).to.equal('2023-06-01');
    expect(sent.headers['anthropic-beta']).to.equal('context-1m-2025-08-07');

    expectAnthropicShape('Message', message);
    expect(message).to.deep.include({ ...upstreamMessage, model: 'claude-sonnet-4-5' });
    const credits = (message as unknown as { credits_used: number }).credits_used;
    expect(Math.round(credits * 1e6)).to.equal(expectedMicro);
    expect(Number(response.headers.get('x-credits-used'))).to.equal(credits);
    const record = await gateway.runtime.db('usage_records').where({ request_id: response.headers.get('x-request-id') }).first();
    expect(record).to.include({ endpoint: 'messages', model_used: 'claude-sonnet-4-5', status: 'succeeded' });
    expect(Number(record.credits_micro)).to.equal(expectedMicro);
    expect([Number(record.input_tokens), Number(record.output_tokens)]).to.deep.equal([4050, 100]);
    expect(record.units).to.deep.equal({ cache_creation_input_tokens: 1000, cache_read_input_tokens: 3000 });
  });

  it('resolves Anthropic\'s dated model ids and -latest names to the catalog\'s records', async () => {
    anthropicUpstream.on('POST /v1/messages', { json: { ...upstreamMessage, model: 'claude-3-5-haiku-20241022' } });
    const message = await client.messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.model).to.equal('claude-3-5-haiku');
    expect(anthropicUpstream.received('POST /v1/messages')[0].json.model).to.equal('claude-3-5-haiku-20241022');
    const dated = await client.models.retrieve('claude-sonnet-4-5-20250929');
    expect(dated.id).to.equal('claude-sonnet-4-5');
  });

  it('streams an Anthropic model\'s own events, with credits_used on message_delta, cache tokens priced', async () => {
    const events = [
      { type: 'message_start', message: { ...upstreamMessage, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Weighing ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'the question.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkYIBxgCKkBsig' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_01Up', name: 'get_weather', input: {}, caller: { type: 'direct' } } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: null }, usage: { input_tokens: 50, output_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 3000, server_tool_use: null } },
      { type: 'message_stop' },
    ];
    anthropicUpstream.on('POST /v1/messages', { sse: events.map((data) => ({ event: data.type, data })) });
    const res = await tenant.fetch('/v1/messages', {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      body: JSON.stringify({ ...request, stream: true }),
    });
    expect(res.status).to.equal(200);
    const received = parseSse(await res.text());
    expectValidStream(received);
    const [sent] = anthropicUpstream.received('POST /v1/messages');
    expect(sent.json).to.deep.equal({ ...request, model: 'claude-sonnet-4-5-20250929', stream: true });
    expect(sent.headers['anthropic-beta']).to.equal('interleaved-thinking-2025-05-14');
    const delta = received.find((e) => e.data.type === 'message_delta')!.data;
    expect(Math.round(delta.credits_used * 1e6)).to.equal(2 * 0 + expectedMicro);
    const { credits_used: _credits, ...rest } = delta;
    const expected = events.map((e) => (e.type === 'message_start' ? { ...e, message: { ...(e.message as object), model: 'claude-sonnet-4-5' } } : e));
    expect(received.map((e) => e.data).map((e) => (e.type === 'message_delta' ? rest : e))).to.deep.equal(expected);
    const record = await gateway.runtime.db('usage_records').where({ request_id: res.headers.get('x-request-id') }).first();
    expect(Number(record.credits_micro)).to.equal(expectedMicro);
    expect(record.units).to.deep.equal({ cache_creation_input_tokens: 1000, cache_read_input_tokens: 3000 });

    // The SDK reads the same stream with its helpers.
    const stream = client.messages.stream({ ...request, stream: undefined } as never);
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).to.deep.equal(['thinking', 'tool_use']);
    expect((final.content[1] as Anthropic.ToolUseBlock).input).to.deep.equal({ city: 'Paris' });
    expect(final.usage.cache_read_input_tokens).to.equal(3000);
  });

  it('an upstream 529 is the client\'s 529 overloaded_error once retries are spent', async () => {
    anthropicUpstream.on('POST /v1/messages', { status: 529, headers: { 'retry-after': '0' }, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const err = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Anthropic.APIError);
    expect(err).to.be.instanceOf(Anthropic.InternalServerError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).to.equal(529);
    expect(((err as InstanceType<typeof Anthropic.APIError>).error as { error: { type: string } }).error.type).to.equal('overloaded_error');
    expect(anthropicUpstream.received('POST /v1/messages').length, 'retried before giving up').to.be.greaterThan(1);
  });

  it('an OpenAI model gets the chat translation: system, tools, tool_choice any, stop, user, images', async () => {
    openaiUpstream.on('POST /v1/chat/completions', {
      json: {
        id: 'chatcmpl-up', object: 'chat.completion', created: 1_700_000_000, model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_up1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, finish_reason: 'tool_calls', logprobs: null }],
        usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
      },
    });
    const message = await client.messages.create({
      model: 'gpt-4o-mini', max_tokens: 300, system: 'You forecast weather.',
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://img.example.com/sky.png' } }, { type: 'text', text: 'Weather?' }] }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true }, stop_sequences: ['END'], metadata: { user_id: 'user-42' },
    });
    const [sent] = openaiUpstream.received('POST /v1/chat/completions');
    expect(sent.json.messages).to.deep.equal([
      { role: 'system', content: 'You forecast weather.' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://img.example.com/sky.png' } }, { type: 'text', text: 'Weather?' }] },
    ]);
    expect(sent.json).to.deep.include({ model: 'gpt-4o-mini', tool_choice: 'required', parallel_tool_calls: false, stop: ['END'], user: 'user-42' });
    expect(sent.json.tools).to.deep.equal([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }]);
    expectAnthropicShape('Message', message);
    expect(message.stop_reason).to.equal('tool_use');
    expect(message.content).to.deep.equal([{ type: 'tool_use', id: 'call_up1', name: 'get_weather', input: { city: 'Paris' }, caller: { type: 'direct' } }]);
    expect(message.usage).to.deep.include({ input_tokens: 40, output_tokens: 9 });
  });

  it('charged the workspace exactly the sum of its usage records', async () => {
    await expectChargedAsRecorded(gateway.runtime.db, tenant.workspaceId, 100);
  });
});
