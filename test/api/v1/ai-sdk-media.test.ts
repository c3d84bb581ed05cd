/**
 * The Vercel AI SDK's OpenAI provider (`@ai-sdk/openai`) against the gateway for embeddings, images,
 * speech and transcription, offline with the simulated models, with provider options set (they reach the
 * request, and the answers pass the SDK's own response checks).
 */
import { expect } from 'chai';
import { createOpenAI } from '@ai-sdk/openai';
import { embedMany, experimental_generateSpeech as generateSpeech, experimental_transcribe as transcribe, generateImage } from 'ai';
import { useGateway } from '../../support/suite-gateway';
import { isPng, isWav } from '../../support/media';

const SPOKEN = 'The simulated voice reads this sentence back';

describe('the Vercel AI SDK (ai + @ai-sdk/openai) against the gateway', function () {
  this.timeout(120_000);
  const env = useGateway({ credits: 50 });
  let openai: ReturnType<typeof createOpenAI>;
  before(() => {
    openai = createOpenAI({ apiKey: env.tenant.key, baseURL: `${env.gateway.url}/v1` });
  });

  it('embedMany, with dimensions as a provider option', async () => {
    const { embeddings, usage } = await embedMany({
      model: openai.embedding('sim-embed'), values: ['a quiet lake', 'a loud city'], maxRetries: 0,
      providerOptions: { openai: { dimensions: 32 } },
    });
    expect(embeddings).to.have.length(2);
    expect(embeddings[0]).to.have.length(32);
    expect(usage.tokens).to.be.greaterThan(0);
  });

  it('generateImage, with provider options', async () => {
    const { images } = await generateImage({
      model: openai.image('sim-image'), prompt: 'a red kite', n: 2, size: '256x256', maxRetries: 0,
      providerOptions: { openai: { quality: 'high', output_format: 'png' } },
    });
    expect(images).to.have.length(2);
    expect(isPng(Buffer.from(images[0].uint8Array))).to.equal(true);
  });

  it('generateSpeech, with speed as a provider option', async () => {
    const { audio } = await generateSpeech({
      model: openai.speech('sim-tts'), text: SPOKEN, voice: 'alloy', outputFormat: 'wav', maxRetries: 0,
      providerOptions: { openai: { speed: 1.25 } },
    });
    expect(isWav(Buffer.from(audio.uint8Array))).to.equal(true);
  });

  it('transcribe, with provider options (verbose segments with OpenAI\'s fields)', async () => {
    const wav = await env.speech(SPOKEN);
    const result = await transcribe({
      model: openai.transcription('sim-transcribe'), audio: wav, maxRetries: 0,
      providerOptions: { openai: { language: 'en', temperature: 0, timestampGranularities: ['segment'], prompt: 'a broadcast' } },
    });
    expect(result.text).to.equal(SPOKEN);
    // OpenAI's verbose answers name the language (`english`); the SDK maps the name back to its code.
    expect(result.language).to.equal('en');
    expect(result.durationInSeconds).to.be.greaterThan(0);
    expect(result.segments.length).to.be.greaterThan(0);
  });
});
