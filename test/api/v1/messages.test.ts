/**
 * `POST /v1/messages` through Anthropic's own SDK against the simulated models: plain and streamed
 * answers (the SDK's stream helpers), tools over several turns, thinking, images, documents, token counts,
 * the model list in Anthropic's shape, and the charge each answer costs.
 */
import Anthropic from '@anthropic-ai/sdk';
import { expect } from 'chai';
import { startTestGateway, type Tenant, type TestGateway } from '../../support/gateway';
import { pngImage } from '../../support/media';
import { anthropicClient, expectAnthropicShape, expectChargedAsRecorded, expectValidStream, parseSse } from '../../support/anthropic';

const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const clock: Anthropic.Tool = { name: 'get_time', input_schema: { type: 'object', properties: { zone: { type: 'string' } } } };

describe('POST /v1/messages with the Anthropic SDK', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  let client: Anthropic;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 100 });
    client = anthropicClient(gateway.url, tenant.key);
  });
  after(() => gateway?.stop());

  const usageRecord = (requestId: string) => gateway.runtime.db('usage_records').where({ request_id: requestId }).first();

  it('creates a message: text, usage, id, the charge in the headers, the usage record and the ledger', async () => {
    const { data: message, response } = await client.messages.create({
      model: 'sim-chat', max_tokens: 256, system: 'You are terse.', messages: [{ role: 'user', content: 'Hello from the Anthropic SDK' }],
      metadata: { user_id: 'user-7' }, stop_sequences: ['never-there'], service_tier: 'auto',
      // The SDK's types no longer list the sampling settings; the API still takes them.
      ...({ temperature: 0.5, top_p: 0.9 } as object),
    }).withResponse();
    expectAnthropicShape('Message', message);
    expect(message.id).to.match(/^msg_/);
    expect(message.type).to.equal('message');
    expect(message.role).to.equal('assistant');
    expect(message.model).to.equal('sim-chat');
    expect(message.stop_reason).to.equal('end_turn');
    expect(message.content).to.have.length(1);
    const [block] = message.content;
    expect(block.type === 'text' && block.text).to.contain('Simulated reply to "Hello from the Anthropic SDK"');
    expect(block.type === 'text' && block.text).to.contain('The conversation holds 2 messages.');
    expect(message.usage.input_tokens).to.be.greaterThan(0);
    expect(message.usage.output_tokens).to.be.greaterThan(0);
    const requestId = response.headers.get('x-request-id')!;
    expect(response.headers.get('x-model-used')).to.equal('sim-chat');
    const credits = Number(response.headers.get('x-credits-used'));
    expect((message as unknown as { credits_used: number }).credits_used).to.equal(credits);
    const record = await usageRecord(requestId);
    expect(record).to.include({ endpoint: 'messages', status: 'succeeded', model_used: 'sim-chat' });
    expect([Number(record.input_tokens), Number(record.output_tokens)]).to.deep.equal([message.usage.input_tokens, message.usage.output_tokens]);
    expect(Number(record.credits_micro)).to.equal(Math.round(credits * 1e6));
  });

  it('takes the key as x-api-key and as a Bearer token', async () => {
    const bearer = anthropicClient(gateway.url, tenant.key, { authToken: true });
    const message = await bearer.messages.create({ model: 'sim-chat-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Bearer' }] });
    expect(message.content[0].type).to.equal('text');
  });

  it('streams with the SDK helpers: text events and the final message', async () => {
    const stream = client.messages.stream({ model: 'sim-chat', max_tokens: 256, messages: [{ role: 'user', content: 'Stream a few words please' }] });
    let text = '';
    stream.on('text', (delta) => { text += delta; });
    const final = await stream.finalMessage();
    expect(text).to.contain('Simulated reply to "Stream a few words please"');
    expect(final.content).to.have.length(1);
    expect(final.content[0].type === 'text' && final.content[0].text).to.equal(text);
    expect(final.stop_reason).to.equal('end_turn');
    expect(final.usage.output_tokens).to.be.greaterThan(0);
    expect(final.usage.input_tokens).to.be.greaterThan(0);
  });

  it('streams Anthropic\'s events exactly, each valid against its schema', async () => {
    const res = await tenant.fetch('/v1/messages', {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'sim-chat', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'Events please' }] }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const events = parseSse(await res.text());
    expectValidStream(events);
    const types = events.map((e) => e.data.type);
    expect(types.slice(0, 3)).to.deep.equal(['message_start', 'ping', 'content_block_start']);
    expect(types.slice(-3)).to.deep.equal(['content_block_stop', 'message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_delta').length).to.be.greaterThan(1);
    const delta = events.find((e) => e.data.type === 'message_delta')!.data;
    expect(delta.delta.stop_reason).to.equal('end_turn');
    expect(delta.usage.output_tokens).to.be.greaterThan(0);
    const record = await usageRecord(res.headers.get('x-request-id')!);
    expect(record).to.include({ endpoint: 'messages', status: 'succeeded' });
    expect([Number(record.input_tokens), Number(record.output_tokens)]).to.deep.equal([delta.usage.input_tokens, delta.usage.output_tokens]);
    expect(Number(record.credits_micro)).to.equal(Math.round(delta.credits_used * 1e6));

    // A tool call streams as a tool_use block whose input arrives as input_json_delta.
    const called = await tenant.fetch('/v1/messages', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-chat', max_tokens: 256, stream: true, tools: [weather], messages: [{ role: 'user', content: 'sim:call get_weather {"city":"Bergen"}' }] }),
    });
    const toolEvents = parseSse(await called.text());
    expectValidStream(toolEvents);
    const start = toolEvents.find((e) => e.data.type === 'content_block_start')!.data;
    expect(start.content_block).to.include({ type: 'tool_use', name: 'get_weather' });
    const json = toolEvents.filter((e) => e.data.delta?.type === 'input_json_delta').map((e) => e.data.delta.partial_json).join('');
    expect(JSON.parse(json)).to.deep.equal({ city: 'Bergen' });
    expect(toolEvents.find((e) => e.data.type === 'message_delta')!.data.delta.stop_reason).to.equal('tool_use');
  });

  it('calls tools over several turns (tool_use, tool_result with is_error and content blocks), streamed and not', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'sim:call get_weather {"city":"Oslo"}' }];
    const first = await client.messages.create({ model: 'sim-chat', max_tokens: 256, tools: [clock, weather], messages });
    expectAnthropicShape('Message', first);
    expect(first.stop_reason).to.equal('tool_use');
    const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(use).to.include({ name: 'get_weather' });
    expect(use.input).to.deep.equal({ city: 'Oslo' });
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'Sunny, 21 C' }] }] });
    const second = await client.messages.create({ model: 'sim-chat', max_tokens: 256, tools: [clock, weather], messages });
    expect(second.stop_reason).to.equal('end_turn');
    expect(second.content[0].type === 'text' && second.content[0].text).to.contain('Based on get_weather, which returned "Sunny, 21 C"');

    // A third turn: a new question, the tool streamed this time; then a failed tool result.
    messages.push({ role: 'assistant', content: second.content });
    messages.push({ role: 'user', content: 'sim:call get_time {"zone":"UTC"}' });
    const stream = client.messages.stream({ model: 'sim-chat', max_tokens: 256, tools: [clock, weather], messages });
    let json = '';
    stream.on('inputJson', (delta) => { json += delta; });
    const third = await stream.finalMessage();
    const call = third.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(call.name).to.equal('get_time');
    expect(call.input).to.deep.equal({ zone: 'UTC' });
    expect(JSON.parse(json)).to.deep.equal({ zone: 'UTC' });
    expect(third.stop_reason).to.equal('tool_use');
    messages.push({ role: 'assistant', content: third.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, is_error: true, content: 'clock unavailable' }, { type: 'text', text: 'Then just say hi.' }] });
    const fourth = await client.messages.create({ model: 'sim-chat', max_tokens: 256, tools: [clock, weather], messages });
    expect(fourth.content[0].type === 'text' && fourth.content[0].text).to.contain('Based on get_time, which returned "Error: clock unavailable"');
  });

  it('honours tool_choice: any, tool, none and disable_parallel_tool_use', async () => {
    const ask = (tool_choice: Anthropic.ToolChoice) => client.messages.create({ model: 'sim-chat', max_tokens: 128, tools: [weather, clock], tool_choice, messages: [{ role: 'user', content: 'What now?' }] });
    expect((await ask({ type: 'any' })).content.map((b) => b.type)).to.deep.equal(['tool_use']);
    const forced = await ask({ type: 'tool', name: 'get_time', disable_parallel_tool_use: true });
    expect(forced.content[0].type === 'tool_use' && forced.content[0].name).to.equal('get_time');
    expect((await ask({ type: 'none' })).content.map((b) => b.type)).to.deep.equal(['text']);
    expect((await ask({ type: 'auto', disable_parallel_tool_use: true })).stop_reason).to.equal('tool_use');
  });

  it('thinks on a reasoning model: thinking blocks with signatures, streamed as thinking_delta and signature_delta, carried back', async () => {
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const message = await client.messages.create({ model: 'sim-reasoner', max_tokens: 4096, thinking, messages: [{ role: 'user', content: 'Why is the sky blue?' }] });
    expectAnthropicShape('Message', message);
    expect(message.content.map((b) => b.type)).to.deep.equal(['thinking', 'text']);
    const block = message.content[0] as Anthropic.ThinkingBlock;
    expect(block.thinking).to.contain('Simulated reasoning at low effort');
    expect(block.signature).to.match(/^[A-Za-z0-9+/=]{20,}$/);

    const res = await tenant.fetch('/v1/messages', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-reasoner', max_tokens: 16000, stream: true, thinking: { type: 'enabled', budget_tokens: 12000 }, messages: [{ role: 'user', content: 'Think hard' }] }),
    });
    expect(res.status).to.equal(200);
    const events = parseSse(await res.text());
    expectValidStream(events);
    const deltas = events.filter((e) => e.data.type === 'content_block_delta').map((e) => e.data.delta.type);
    expect(deltas).to.include.members(['thinking_delta', 'signature_delta', 'text_delta']);
    expect(deltas.indexOf('signature_delta')).to.be.lessThan(deltas.indexOf('text_delta'));
    const starts = events.filter((e) => e.data.type === 'content_block_start').map((e) => e.data.content_block.type);
    expect(starts).to.deep.equal(['thinking', 'text']);

    const stream = client.messages.stream({ model: 'sim-reasoner', max_tokens: 4096, thinking, messages: [{ role: 'user', content: 'Stream your thoughts' }] });
    let thought = '';
    stream.on('thinking', (delta) => { thought += delta; });
    const final = await stream.finalMessage();
    expect((final.content[0] as Anthropic.ThinkingBlock).thinking).to.equal(thought);
    expect((final.content[0] as Anthropic.ThinkingBlock).signature).to.not.equal('');

    // The thinking (and redacted thinking) of earlier turns is sent back with them.
    const next = await client.messages.create({
      model: 'sim-reasoner', max_tokens: 4096, thinking, messages: [
        { role: 'user', content: 'Why is the sky blue?' },
        { role: 'assistant', content: [...message.content, { type: 'redacted_thinking', data: 'opaque' }] },
        { role: 'user', content: 'And at sunset?' },
      ],
    });
    expect(next.content.map((b) => b.type)).to.deep.equal(['thinking', 'text']);
  });

  it('reads images (base64 and url) and documents (PDF base64, plain text)', async () => {
    const png = (await pngImage(16, 8)).toString('base64');
    const message = await client.messages.create({
      model: 'sim-chat', max_tokens: 512, messages: [{
        role: 'user', content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'image', source: { type: 'url', url: 'https://images.example.com/cat.jpg' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: Buffer.from('%PDF-1.4 tiny').toString('base64') }, title: 'report.pdf' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Plain notes' }, title: 'notes' },
          { type: 'text', text: 'Describe these', cache_control: { type: 'ephemeral' } },
        ],
      }],
    });
    const text = message.content[0].type === 'text' ? message.content[0].text : '';
    expect(text).to.contain('I see 2 images: a 16x8 PNG image; an image at images.example.com.');
    expect(text).to.contain('I received the file report.pdf.');
  });

  it('counts tokens without calling a model or charging', async () => {
    const before = await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId }).count({ n: '*' }).first();
    const counted = await client.messages.countTokens({ model: 'sim-chat', system: 'Be brief.', tools: [weather], messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    expectAnthropicShape('CountMessageTokensResponse', counted);
    expect(counted.input_tokens).to.be.greaterThan(10);
    const bigger = await client.messages.countTokens({ model: 'sim-chat', messages: [{ role: 'user', content: 'How many tokens is this? '.repeat(50) }] });
    expect(bigger.input_tokens).to.be.greaterThan(counted.input_tokens);
    const after = await gateway.runtime.db('usage_records').where({ workspace_id: tenant.workspaceId }).count({ n: '*' }).first();
    expect(after?.n).to.equal(before?.n);
  });

  it('lists and reads models in Anthropic\'s shape when the request carries anthropic-version', async () => {
    const page = await client.models.list({ limit: 5 });
    expectAnthropicShape('ListResponse_ModelInfo_', { data: page.data, first_id: page.first_id, last_id: page.last_id, has_more: page.has_more });
    expect(page.data).to.have.length(5);
    expect(page.has_more).to.equal(true);
    const all: string[] = [];
    for await (const model of client.models.list({ limit: 50 })) all.push(model.id);
    expect(all).to.include.members(['sim-chat', 'sim-reasoner']);
    expect(all).to.not.include('sim-embed');
    const one = await client.models.retrieve('sim-reasoner');
    expectAnthropicShape('ModelInfo', one);
    expect(one).to.include({ type: 'model', id: 'sim-reasoner', display_name: 'Simulated Reasoner', max_tokens: 16384 });
    // Without anthropic-version, the same route answers in OpenAI's shape.
    const openai = await (await tenant.fetch('/v1/models/sim-chat')).json() as { object: string };
    expect(openai.object).to.equal('model');
  });

  it('replays a request with the same Idempotency-Key without a second charge', async () => {
    const params = { model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user' as const, content: 'Once only' }] };
    const first = await client.messages.create(params, { headers: { 'Idempotency-Key': 'messages-once' } }).withResponse();
    const again = await client.messages.create(params, { headers: { 'Idempotency-Key': 'messages-once' } }).withResponse();
    expect(again.data).to.deep.equal(first.data);
    expect(again.response.headers.get('x-idempotent-replayed')).to.equal('true');
    const rows = await gateway.runtime.db('usage_records').where({ request_id: first.response.headers.get('x-request-id') });
    expect(rows).to.have.length(1);
  });

  it('falls back along the workspace\'s chain, plain and streamed, to a model served by the translation', async () => {
    const put = await tenant.fetch('/v1/fallback-chains/sim-chat-fail-500', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chain: ['sim-reasoner'] }) });
    expect(put.status).to.equal(200);
    const params = { model: 'sim-chat-fail-500', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Fall back please' }] };
    const { data, response } = await client.messages.create(params).withResponse();
    expect(data.model).to.equal('sim-reasoner');
    expect(response.headers.get('x-fallback-from')).to.equal('sim-chat-fail-500');
    expect(response.headers.get('x-fallback-depth')).to.equal('1');
    const record = await usageRecord(response.headers.get('x-request-id')!);
    expect(record).to.include({ endpoint: 'messages', model_requested: 'sim-chat-fail-500', model_used: 'sim-reasoner', status: 'succeeded' });
    const outcome = await (await tenant.fetch(`/v1/requests/${response.headers.get('x-request-id')}`)).json() as { status: string };
    expect(outcome.status).to.equal('succeeded');
    const stream = client.messages.stream(params);
    const final = await stream.finalMessage();
    expect(final.model).to.equal('sim-reasoner');
    expect(final.content[0].type === 'text' && final.content[0].text).to.contain('Fall back please');
  });

  it('charged the workspace exactly the sum of its usage records', async () => {
    await expectChargedAsRecorded(gateway.runtime.db, tenant.workspaceId, 100);
  });
});
