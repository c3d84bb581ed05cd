import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { weatherTool } from '../../support/responses';
import { startTestGateway, type TestGateway, type Tenant } from '../../support/gateway';
import { getBalance, ledgerSum } from '../../../domain/ledger';
import { ledgerKinds } from '../../support/media';

/** A real 2x2 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64');

/** The events of a text/event-stream body, in order. */
function sseEvents(text: string): Array<{ event: string | null; data: any }> {
  return text.split('\n\n').filter((block) => block.trim()).map((block) => {
    const event = /^event: (.*)$/m.exec(block)?.[1] ?? null;
    const data = /^data: (.*)$/m.exec(block)![1];
    return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
  });
}

describe('POST /v1/responses (official client, simulated models)', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let tenant: Tenant;
  before(async function () {
    this.timeout(180_000);
    gateway = await startTestGateway();
    tenant = await gateway.newTenant({ credits: 100 });
  });
  after(() => gateway?.stop());

  const post = (t: Tenant, body: unknown, headers: Record<string, string> = {}) => t.fetch('/v1/responses', {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });

  it('answers a string input with a Response object, usage, credits and the gateway headers', async () => {
    const { data, response } = await tenant.client.responses.create({ model: 'sim-chat', input: 'Hello there', metadata: { ticket: 'T-1' } }).withResponse();
    expect(data.object).to.equal('response');
    expect(data.id).to.match(/^resp_[0-9a-f]{32}$/);
    expect(data.status).to.equal('completed');
    expect(data.model).to.equal('sim-chat');
    expect(data.output).to.have.length(1);
    const message = data.output[0] as OpenAI.Responses.ResponseOutputMessage;
    expect(message).to.include({ type: 'message', role: 'assistant', status: 'completed' });
    expect(message.id).to.match(/^msg_/);
    expect(data.output_text).to.contain('Simulated reply to "Hello there"');
    expect(data.usage!.input_tokens).to.be.greaterThan(0);
    expect(data.usage!.output_tokens).to.be.greaterThan(0);
    expect(data.usage!.total_tokens).to.equal(data.usage!.input_tokens + data.usage!.output_tokens);
    expect(data.usage!.input_tokens_details).to.deep.equal({ cached_tokens: 0 });
    expect(data.usage!.output_tokens_details).to.deep.equal({ reasoning_tokens: 0 });
    expect(data).to.include({ store: true, previous_response_id: null, parallel_tool_calls: true, instructions: null });
    expect(data.metadata).to.deep.equal({ ticket: 'T-1' });
    expect(response.headers.get('x-model-used')).to.equal('sim-chat');
    expect(response.headers.get('x-request-id')).to.be.a('string');
    const credits = Number(response.headers.get('x-credits-used'));
    expect(credits).to.be.greaterThan(0);
    expect((data as unknown as { credits_used: number }).credits_used).to.equal(credits);
    expect(await ledgerKinds(gateway.runtime.db, response.headers.get('x-request-id')!)).to.deep.equal(['reserve', 'release', 'settle']);
    const usage = await gateway.runtime.db('usage_records').where({ request_id: response.headers.get('x-request-id') }).first();
    expect(usage).to.include({ endpoint: 'responses', model_used: 'sim-chat', status: 'succeeded' });
    const sums = await ledgerSum(gateway.runtime.db, tenant.workspaceId);
    expect(sums.ledgerMicro).to.equal(sums.bucketsMicro);
  });

  it('passes instructions, messages, images and uploaded files to the model', async () => {
    const image = await tenant.client.files.create({ file: await toFile(PNG, 'dot.png'), purpose: 'vision' });
    const doc = await tenant.client.files.create({ file: await toFile(Buffer.from('Revenue: 42\n'), 'report.txt'), purpose: 'user_data' });
    const data = await tenant.client.responses.create({
      model: 'sim-chat',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Earlier question' },
        { role: 'assistant', content: 'Earlier answer' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look at these' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG.toString('base64')}`, detail: 'auto' },
            { type: 'input_image', file_id: image.id, detail: 'low' },
            { type: 'input_file', file_id: doc.id },
          ],
        },
      ],
    });
    // The simulated model describes what reached it: both images, the file, and four chat messages.
    expect(data.output_text).to.contain('Simulated reply to "Look at these"');
    expect(data.output_text).to.contain('I see 2 images: a 2x2 PNG image; a 2x2 PNG image.');
    expect(data.output_text).to.contain('I received the file report.txt.');
    expect(data.output_text).to.contain('The conversation holds 4 messages.');
    expect(data.instructions).to.equal('Be brief.');
  });

  it('calls a function tool, then continues from previous_response_id with the function output', async () => {
    const first = await tenant.client.responses.create({ model: 'sim-chat', input: 'Weather in Paris?', tools: [weatherTool], tool_choice: 'required' });
    expect(first.output).to.have.length(1);
    const call = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).to.include({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call.id).to.match(/^fc_/);
    expect(call.call_id).to.match(/^call_/);
    expect(JSON.parse(call.arguments)).to.have.property('city').that.is.a('string');
    expect(first.tools).to.deep.equal([{ ...weatherTool }]);
    expect(first.tool_choice).to.equal('required');

    const second = await tenant.client.responses.create({
      model: 'sim-chat', previous_response_id: first.id, tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 21}' }],
    });
    expect(second.previous_response_id).to.equal(first.id);
    expect(second.output_text).to.contain('Based on get_weather, which returned "{"temperature": 21}"');

    // The items the model was given: the first turn (input and its call), then this turn's output item.
    const items = await tenant.client.responses.inputItems.list(second.id, { order: 'asc' });
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'function_call', 'function_call_output']);
    expect(items.data[1].id).to.equal(call.id);
    const desc = await tenant.client.responses.inputItems.list(second.id, { limit: 2 });
    expect(desc.data.map((i) => i.type)).to.deep.equal(['function_call_output', 'function_call']);
    expect(desc.has_more).to.equal(true);
    const rest = await tenant.client.responses.inputItems.list(second.id, { limit: 2, after: desc.data[1].id });
    expect(rest.data.map((i) => i.type)).to.deep.equal(['message']);
    expect(rest.has_more).to.equal(false);

    const retrieved = await tenant.client.responses.retrieve(second.id);
    expect(retrieved.output).to.deep.equal(second.output);
    expect(retrieved.usage).to.deep.equal(second.usage);
  });

  it('resolves item_reference items from the workspace\'s stored responses', async () => {
    const first = await tenant.client.responses.create({ model: 'sim-chat', input: 'Remember the word kiwi.' });
    const second = await tenant.client.responses.create({
      model: 'sim-chat',
      input: [{ type: 'item_reference', id: first.output[0].id! }, { role: 'user', content: 'What was the word?' }],
    });
    expect(second.output_text).to.contain('The conversation holds 2 messages.');
    const items = await tenant.client.responses.inputItems.list(second.id, { order: 'asc' });
    expect(items.data[0]).to.deep.include({ id: first.output[0].id, type: 'message', role: 'assistant' });
  });

  it('answers JSON for text.format json_schema and json_object', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'integer' } },
      required: ['city', 'population'], additionalProperties: false,
    };
    const structured = await tenant.client.responses.create({
      model: 'sim-chat', input: 'Largest city?', text: { format: { type: 'json_schema', name: 'city', schema, strict: true } },
    });
    const parsed = JSON.parse(structured.output_text);
    expect(parsed.city).to.be.a('string');
    expect(Number.isInteger(parsed.population)).to.equal(true);
    expect(structured.text!.format).to.deep.equal({ type: 'json_schema', name: 'city', schema, strict: true });

    const object = await tenant.client.responses.create({ model: 'sim-chat', input: 'Answer in JSON', text: { format: { type: 'json_object' } } });
    expect(JSON.parse(object.output_text)).to.have.property('answer');
  });

  it('marks an answer cut at max_output_tokens incomplete', async () => {
    const data = await tenant.client.responses.create({ model: 'sim-chat', input: 'Tell me a long story about the sea', max_output_tokens: 3 });
    expect(data.status).to.equal('incomplete');
    expect(data.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
    expect(data.max_output_tokens).to.equal(3);
    expect(data.usage!.output_tokens).to.be.at.most(3);
  });

  it('streams OpenAI\'s events in order, with sequence numbers, and stores the final response', async () => {
    const stream = tenant.client.responses.stream({ model: 'sim-chat', input: 'Stream me a few words please' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    let text = '';
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    const types = events.map((e) => e.type);
    expect(types.slice(0, 5)).to.deep.equal(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(types.slice(-5)).to.deep.equal(['response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.filter((t) => t === 'response.output_text.delta').length).to.be.greaterThan(2);
    expect(events.map((e) => e.sequence_number)).to.deep.equal(events.map((_, i) => i));
    expect(final.output_text).to.equal(text);
    expect(final.status).to.equal('completed');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.usage!.total_tokens).to.be.greaterThan(0);
    expect((completed.response as unknown as { credits_used: number }).credits_used).to.be.greaterThan(0);
    const stored = await tenant.client.responses.retrieve(final.id);
    expect(stored.output).to.deep.equal(completed.response.output);
    expect(stored.status).to.equal('completed');
  });

  it('streams function calls as function_call items with argument deltas', async () => {
    const stream = tenant.client.responses.stream({ model: 'sim-chat', input: 'Weather in Oslo?', tools: [weatherTool] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const added = events.find((e) => e.type === 'response.output_item.added') as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(added.item).to.include({ type: 'function_call', name: 'get_weather', arguments: '', status: 'in_progress' });
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta') as OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent[];
    const done = events.find((e) => e.type === 'response.function_call_arguments.done') as OpenAI.Responses.ResponseFunctionCallArgumentsDoneEvent;
    expect(deltas.length).to.be.greaterThan(1);
    expect(deltas.map((d) => d.delta).join('')).to.equal(done.arguments);
    expect(done.name).to.equal('get_weather');
    const call = final.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).to.include({ type: 'function_call', arguments: done.arguments, status: 'completed', id: added.item.id });
  });

  it('ends a stream that breaks mid-answer with an error event and response.failed, billing what was sent', async () => {
    const res = await post(tenant, { model: 'sim-chat', input: 'Stream something that breaks', stream: true }, { 'x-simulate-failure': 'malformed' });
    expect(res.status).to.equal(200);
    const events = sseEvents(await res.text());
    expect(events.map((e) => e.event).slice(-2)).to.deep.equal(['error', 'response.failed']);
    expect(events.at(-2)!.data).to.include({ type: 'error' });
    expect(events.at(-1)!.data.response).to.deep.include({ status: 'failed' });
    expect(events.at(-1)!.data.response.error.code).to.equal('server_error');
    expect(events.every((e) => e.data !== '[DONE]')).to.equal(true);
    const requestId = res.headers.get('x-request-id')!;
    let usage: any;
    for (let i = 0; i < 50 && !usage; i++) {
      usage = await gateway.runtime.db('usage_records').where({ request_id: requestId }).first();
      if (!usage) await new Promise((r) => setTimeout(r, 100));
    }
    expect(usage).to.include({ status: 'cancelled', error_code: 'upstream_error' });
  });

  it('answers a failure before the first streamed byte as an ordinary JSON error, charging nothing', async () => {
    const other = await gateway.newTenant({ credits: 5 });
    const res = await post(other, { model: 'sim-chat', input: 'hi', stream: true }, { 'x-simulate-failure': '400' });
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.contain('application/json');
    expect(((await res.json()) as any).error).to.have.keys('message', 'type', 'param', 'code');
    expect((await getBalance(gateway.runtime.db, other.workspaceId)).totalMicro).to.equal(5_000_000);
  });

  it('falls back along the workspace chain and says so in the headers', async () => {
    const { setFallbackChain } = await import('../../../domain/workspaces');
    const t = await gateway.newTenant({ credits: 10 });
    await setFallbackChain(gateway.runtime.db, { workspaceId: t.workspaceId, sourceModel: 'sim-chat-fail-500', chain: ['sim-chat-mini'], actor: 'test', modalityOf: async () => 'chat' });
    const { data, response } = await t.client.responses.create({ model: 'sim-chat-fail-500', input: 'hi' }).withResponse();
    expect(data.model).to.equal('sim-chat-mini');
    expect(response.headers.get('x-model-used')).to.equal('sim-chat-mini');
    expect(response.headers.get('x-fallback-from')).to.equal('sim-chat-fail-500');
    expect(response.headers.get('x-fallback-depth')).to.equal('1');
  });

  it('replays an Idempotency-Key without a second charge', async () => {
    const t = await gateway.newTenant({ credits: 10 });
    const body = { model: 'sim-chat', input: 'Exactly once' };
    const first = await post(t, body, { 'idempotency-key': 'resp-once' });
    const again = await post(t, body, { 'idempotency-key': 'resp-once' });
    const [a, b] = await Promise.all([first.json() as Promise<any>, again.json() as Promise<any>]);
    expect(b).to.deep.equal(a);
    expect(again.headers.get('x-idempotent-replayed')).to.equal('true');
    const settles = await gateway.runtime.db('credit_ledger').where({ workspace_id: t.workspaceId, kind: 'settle' }).count<{ count: string }[]>('* as count');
    expect(Number(settles[0].count)).to.equal(1);
    expect((await post(t, { ...body, input: 'Something else' }, { 'idempotency-key': 'resp-once' })).status).to.equal(422);
  });

  it('counts against the key\'s requests-per-minute quota like every model endpoint', async () => {
    const t = await gateway.newTenant({ quotas: { rpm: 1 } });
    expect((await post(t, { model: 'sim-chat', input: 'one' })).status).to.equal(200);
    const limited = await post(t, { model: 'sim-chat', input: 'two' });
    expect(limited.status).to.equal(429);
    // Reading a stored response is not a model request.
    const stored = await t.fetch('/v1/responses/resp_00000000000000000000000000000000');
    expect(stored.status).to.equal(404);
  });

  it('refuses a request for more credits than the workspace holds (402), charging nothing', async () => {
    const poor = await gateway.newTenant({ credits: 0 });
    const res = await post(poor, { model: 'sim-chat', input: 'hi' });
    expect(res.status).to.equal(402);
    expect(((await res.json()) as any).error.type).to.equal('insufficient_quota');
  });

  it('keeps nothing with store: false', async () => {
    const data = await tenant.client.responses.create({ model: 'sim-chat', input: 'Forget this', store: false });
    expect((data as unknown as { store: boolean }).store).to.equal(false);
    const err = await tenant.client.responses.retrieve(data.id).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    const res = await post(tenant, { model: 'sim-chat', input: 'and then?', previous_response_id: data.id });
    expect(res.status).to.equal(404);
    expect(((await res.json()) as any).error.param).to.equal('previous_response_id');
  });

  it('deletes a response; another workspace\'s id is a 404 exactly like an unknown one', async () => {
    const data = await tenant.client.responses.create({ model: 'sim-chat', input: 'Delete me later' });
    const other = await gateway.newTenant({ credits: 5 });
    const unknownId = 'resp_ffffffffffffffffffffffffffffffff';
    const bodyFor = async (t: Tenant, id: string, method = 'GET', suffix = '') => {
      const res = await t.fetch(`/v1/responses/${id}${suffix}`, { method });
      return { status: res.status, body: JSON.stringify(await res.json()).replace(id, '<id>') };
    };
    for (const [method, suffix] of [['GET', ''], ['GET', '/input_items'], ['DELETE', '']]) {
      const foreign = await bodyFor(other, data.id, method, suffix);
      const unknown = await bodyFor(other, unknownId, method, suffix);
      expect(foreign.status).to.equal(404);
      expect(foreign).to.deep.equal(unknown);
    }
    const continued = await post(other, { model: 'sim-chat', input: 'steal', previous_response_id: data.id });
    expect(continued.status).to.equal(404);
    const referenced = await post(other, { model: 'sim-chat', input: [{ type: 'item_reference', id: data.output[0].id }] });
    expect(referenced.status).to.equal(404);
    expect(((await referenced.json()) as any).error.param).to.equal('input[0].id');

    await tenant.client.responses.delete(data.id);
    const gone = await tenant.client.responses.retrieve(data.id).catch((e) => e);
    expect(gone).to.be.instanceOf(OpenAI.NotFoundError);
    expect(gone.error).to.include({ code: 'response_not_found' });
    expect((await tenant.fetch(`/v1/responses/${data.id}`, { method: 'DELETE' })).status).to.equal(404);
  });

  it('refuses built-in tools, naming the tool', async () => {
    for (const [i, type] of ['web_search', 'file_search', 'code_interpreter', 'computer_use_preview', 'image_generation', 'mcp'].entries()) {
      const res = await post(tenant, { model: 'sim-chat', input: 'hi', tools: [weatherTool, { type }].slice(i % 2 ? 0 : 1) });
      expect(res.status).to.equal(400);
      const { error } = (await res.json()) as any;
      expect(error.message).to.contain(`'${type}'`);
      expect(error).to.include({ code: 'unsupported_tool', param: `tools[${i % 2 ? 1 : 0}].type` });
    }
  });

  it('refuses parameters it cannot honour instead of dropping them', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ top_logprobs: 2 }, 'top_logprobs'],
      [{ background: true }, 'background'],
      [{ truncation: 'auto' }, 'truncation'],
      [{ reasoning: { summary: 'auto' } }, 'reasoning.summary'],
      [{ include: ['message.output_text.logprobs'] }, 'include[0]'],
      [{ reasoning: { effort: 'low' } }, 'reasoning.effort'],
      [{ text: { verbosity: 'low' } }, 'text.verbosity'],
      [{ input: [{ type: 'reasoning', summary: [] }] }, 'input[0].type'],
      [{ input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] }, 'input[0].content[0].file_url'],
      [{ tool_choice: { type: 'web_search_preview' } }, 'tool_choice'],
    ];
    for (const [extra, param] of cases) {
      const res = await post(tenant, { model: 'sim-chat', input: 'hi', ...extra });
      expect(res.status, JSON.stringify(extra)).to.equal(400);
      expect(((await res.json()) as any).error.param, JSON.stringify(extra)).to.equal(param);
    }
  });

  it('refuses images for a model without vision, and unknown previous responses', async () => {
    const res = await post(tenant, { model: 'sim-chat-mini', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/cat.png' }] }] });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as any).error.code).to.equal('image_not_supported_by_model');
    const missing = await post(tenant, { model: 'sim-chat', input: 'hi', previous_response_id: 'resp_nope' });
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as any).error).to.include({ code: 'response_not_found', param: 'previous_response_id' });
  });
});
