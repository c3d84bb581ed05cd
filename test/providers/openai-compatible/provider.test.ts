import { expect } from 'chai';
import { createOpenAICompatibleProvider } from '../../../providers/openai-compatible';
import completion from './fixtures/chat-completion.json';
import embeddings from './fixtures/embeddings.json';
import textChunks from './fixtures/chat-stream-text.json';
import { collect, ctx, expectUpstreamError, useFakeOpenAI } from './harness';

describe('createOpenAICompatibleProvider', () => {
  const { upstream, provider } = useFakeOpenAI();

  it('describes itself as the openai-compatible family of the given host id', () => {
    const openai = provider();

    expect(openai).to.include({ id: 'openai', family: 'openai-compatible', configured: true });
  });

  it('is not configured without an API key, and every adapter then fails with not_configured', async () => {
    const unconfigured = provider({ apiKey: undefined });
    const image = unconfigured.image!('gpt-image-1');
    const file = { data: Buffer.from('x'), filename: 'a.png', mediaType: 'image/png' };

    expect(unconfigured.configured).to.equal(false);
    await expectUpstreamError(unconfigured.chat!('gpt-4o').doGenerate({ messages: [{ role: 'user', content: 'Hi' }] }, ctx), 'not_configured');
    await expectUpstreamError(unconfigured.embedding!('text-embedding-3-small').doEmbed({ input: ['a'] }, ctx), 'not_configured');
    await expectUpstreamError(image.doGenerate({ prompt: 'p', n: 1, params: {} }, ctx), 'not_configured');
    await expectUpstreamError(image.doEdit!({ prompt: 'p', n: 1, params: {}, images: [file] }, ctx), 'not_configured');
    await expectUpstreamError(unconfigured.speech!('tts-1').doSynthesize({ input: 'Hi', voice: 'alloy', format: 'mp3', speed: 1 }, ctx), 'not_configured');
    await expectUpstreamError(unconfigured.transcription!('whisper-1').doTranscribe({ audio: Buffer.from('a'), filename: 'a.mp3', mediaType: 'audio/mpeg' }, ctx), 'not_configured');
    expect(upstream.requests).to.have.length(0);
  });

  it('treats an empty API key as missing', () => {
    expect(provider({ apiKey: '' }).configured).to.equal(false);
  });

  it('serves a second host (groq) from options alone', async () => {
    upstream.on('POST /openai/v1/chat/completions', { json: completion });
    upstream.on('POST /openai/v1/embeddings', { json: embeddings });
    const groq = createOpenAICompatibleProvider({ id: 'groq', baseUrl: `${upstream.url}/openai/v1/`, apiKey: 'gsk_test_456' });

    const answer = await groq.chat!('llama-3.3-70b-versatile').doGenerate({ messages: [{ role: 'user', content: 'Hello!' }], maxTokens: 10 }, ctx);
    await groq.embedding!('nomic-embed-text').doEmbed({ input: ['a', 'b'] }, ctx);

    expect(groq).to.include({ id: 'groq', family: 'openai-compatible', configured: true });
    expect(answer.content).to.equal('Hello! How can I assist you today?');
    const [chat] = upstream.received('POST /openai/v1/chat/completions');
    expect(chat.headers.authorization).to.equal('Bearer gsk_test_456');
    expect(chat.json).to.deep.equal({ model: 'llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 10 });
    expect(upstream.received('POST /openai/v1/embeddings')[0].headers.authorization).to.equal('Bearer gsk_test_456');
  });

  it('sends the host headers from the options along with the key', async () => {
    upstream.on('POST /v1/chat/completions', { sse: textChunks });
    const openai = provider({ headers: { 'OpenAI-Organization': 'org-123', 'OpenAI-Project': 'proj_456' } });

    await collect(openai.chat!('gpt-4o-mini').doStream({ messages: [{ role: 'user', content: 'Hi' }] }, ctx));

    const [sent] = upstream.received('POST /v1/chat/completions');
    expect(sent.headers).to.include({ authorization: 'Bearer sk-test-123', 'openai-organization': 'org-123', 'openai-project': 'proj_456' });
  });
});
