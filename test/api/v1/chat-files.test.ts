import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import { FakeUpstream } from '../../support/fake-upstream';
import { startTestGateway, type TestGateway } from '../../support/gateway';

/** A real 2x2 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64');

const COMPLETION = {
  id: 'chatcmpl-1', object: 'chat.completion', created: 1741569952, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Read it.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 },
};

type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

describe('POST /v1/chat/completions with uploaded file ids', function () {
  this.timeout(120_000);
  let upstream: FakeUpstream;
  let gateway: TestGateway;
  before(async function () {
    this.timeout(180_000);
    upstream = new FakeUpstream().on('POST /v1/chat/completions', { json: COMPLETION });
    await upstream.start();
    gateway = await startTestGateway({ env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-test-files' } });
  });
  after(async () => {
    await gateway?.stop();
    await upstream?.stop();
  });

  it("sends the provider the file's bytes: documents as file_data, images as image_url", async () => {
    const tenant = await gateway.newTenant();
    const text = 'Total revenue: 42\n';
    const doc = await tenant.client.files.create({ file: await toFile(Buffer.from(text), 'report.txt'), purpose: 'user_data' });
    const image = await tenant.client.files.create({ file: await toFile(PNG, 'dot.png'), purpose: 'vision' });
    upstream.requests.length = 0;
    const content: Part[] = [
      { type: 'text', text: 'Summarise these.' },
      { type: 'file', file: { file_id: doc.id } },
      { type: 'file', file: { file_id: image.id } },
    ];
    const answer = await tenant.client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
    expect(answer.choices[0].message.content).to.equal('Read it.');
    const [sent] = upstream.received('POST /v1/chat/completions');
    expect(sent.json.messages[0].content).to.deep.equal([
      { type: 'text', text: 'Summarise these.' },
      { type: 'file', file: { filename: 'report.txt', file_data: `data:text/plain;base64,${Buffer.from(text).toString('base64')}` } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
    ]);
  });

  it("refuses another workspace's file id with 404 before any workflow starts", async () => {
    const owner = await gateway.newTenant();
    const other = await gateway.newTenant();
    const file = await owner.client.files.create({ file: await toFile(Buffer.from('private'), 'private.txt'), purpose: 'user_data' });
    upstream.requests.length = 0;
    for (const stream of [false, true]) {
      const res = await other.fetch('/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', file: { file_id: file.id } }] }] }),
      });
      expect(res.status).to.equal(404);
      const body = (await res.json()) as { error: Record<string, unknown> };
      expect(body.error).to.deep.equal({ message: `No such File object: ${file.id}`, type: 'not_found_error', param: 'messages[0].content[1].file.file_id', code: 'file_not_found' });
    }
    expect(upstream.requests).to.have.length(0);
    const db = gateway.runtime.db;
    expect(await db('usage_records').where({ workspace_id: other.workspaceId })).to.deep.equal([]);
    expect(await db('reservations').where({ workspace_id: other.workspaceId })).to.deep.equal([]);
  });

  it('resolves file ids in streamed answers too', async () => {
    const tenant = await gateway.newTenant();
    const image = await tenant.client.files.create({ file: await toFile(PNG, 'dot.png'), purpose: 'vision' });
    const stream = await tenant.client.chat.completions.create({
      model: 'sim-chat', stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'file', file: { file_id: image.id } }] }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    // The simulated model describes the image it was really given (sniffed from the bytes).
    expect(text).to.contain('I see 1 image: a 2x2 PNG image');
  });

  it('treats a deleted file id like a missing one (404)', async () => {
    const tenant = await gateway.newTenant();
    const file = await tenant.client.files.create({ file: await toFile(Buffer.from('gone soon'), 'gone.txt'), purpose: 'user_data' });
    await tenant.client.files.delete(file.id);
    try {
      await tenant.client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: file.id } }] }] });
      expect.fail('should be 404');
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    }
  });
});
