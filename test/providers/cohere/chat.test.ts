import { expect } from 'chai';
import { createCohereProvider } from '../../../providers/cohere';
import { FakeUpstream } from '../../support/fake-upstream';
import completion from '../openai-compatible/fixtures/chat-completion.json';

describe('providers/cohere chat', () => {
  const upstream = new FakeUpstream();
  before(() => upstream.start());
  after(() => upstream.stop());

  it('speaks OpenAI chat completions on the Compatibility API, one choice per call', async () => {
    upstream.on('POST /compatibility/v1/chat/completions', { json: completion });
    const chat = createCohereProvider({ id: 'cohere', baseUrl: upstream.url, apiKey: 'co-key' }).chat!('command-a-03-2025');

    const result = await chat.doGenerate({ messages: [{ role: 'user', content: 'Hi' }], maxTokens: 10, seed: 3 }, { requestId: 'req_1' });

    expect(chat.nativeChoices).to.equal(false);
    expect(result.content).to.equal('Hello! How can I assist you today?');
    const [sent] = upstream.received('POST /compatibility/v1/chat/completions');
    expect(sent.headers.authorization).to.equal('Bearer co-key');
    expect(sent.json).to.deep.equal({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10, seed: 3 });
  });
});
