import { expect } from 'chai';
import { loadCatalogFiles } from '../../catalog/load';
import { MODALITIES, type ModelRecord, type ParamRule } from '../../catalog/types';

const SIMULATED_SLUGS = [
  'sim-chat', 'sim-chat-mini', 'sim-reasoner', 'sim-chat-audio', 'sim-chat-fail-429', 'sim-chat-fail-500', 'sim-chat-timeout', 'sim-chat-slow',
  'sim-embed', 'sim-embed-fail-500', 'sim-image', 'sim-image-fail-500', 'sim-tts', 'sim-tts-fail-500', 'sim-transcribe',
  'sim-video', 'sim-video-fail', 'sim-music', 'sim-moderation',
];

const PROVIDERS = [
  'openai', 'anthropic', 'google', 'groq', 'together', 'fireworks', 'deepseek', 'mistral', 'xai', 'openrouter', 'cohere', 'voyage',
  'bfl', 'stability', 'runway', 'luma', 'elevenlabs', 'stability-audio', 'azure', 'bedrock', 'vertex', 'simulated',
];

describe('catalog/models', () => {
  const records = loadCatalogFiles();
  const bySlug = new Map(records.map((r) => [r.slug, r]));
  const get = (slug: string): ModelRecord => {
    const record = bySlug.get(slug);
    if (!record) throw new Error(`missing ${slug}`);
    return record;
  };
  const list = (rule: ParamRule | undefined) => (Array.isArray(rule) ? rule : rule?.values);

  it('holds about 170 models with plain slugs', () => {
    expect(records.length).to.be.within(140, 200);
    for (const r of records) expect(r.slug, r.slug).to.match(/^[a-z0-9][a-z0-9._-]*$/);
  });

  it('lets no alias name two models, nor another model\'s slug (a cloud\'s copy of a model takes none of its aliases)', () => {
    const owners = new Map<string, string>();
    for (const r of records) {
      for (const alias of r.aliases ?? []) {
        expect(owners.get(alias), `${alias} on ${r.slug}`).to.equal(undefined);
        expect(bySlug.has(alias), `${alias} on ${r.slug} is a slug`).to.equal(false);
        owners.set(alias, r.slug);
      }
    }
  });

  it('covers every modality', () => {
    for (const modality of MODALITIES) expect(records.filter((r) => r.modality === modality), modality).to.not.be.empty;
  });

  it('covers every provider', () => {
    const providers = new Set(records.map((r) => r.provider));
    for (const provider of PROVIDERS) expect(providers.has(provider), provider).to.equal(true);
  });

  it('has exactly the simulated slugs, each its own upstream id and priced above zero', () => {
    const simulated = records.filter((r) => r.provider === 'simulated');
    expect(simulated.map((r) => r.slug).sort()).to.deep.equal([...SIMULATED_SLUGS].sort());
    for (const r of simulated) {
      expect(r.upstreamId).to.equal(r.slug);
      const prices = Object.values(r.pricing).flatMap((p) => (typeof p === 'number' ? [p] : Object.values(p as Record<string, number>)));
      expect(prices.some((p) => p > 0), r.slug).to.equal(true);
    }
  });

  it('gives the simulated models the parameters of the families they mimic', () => {
    expect(get('sim-chat-audio').capabilities.audioInput).to.equal(true);
    expect(get('sim-chat').capabilities.audioInput).to.equal(false);
    const embed = get('sim-embed');
    expect(embed.dimensions).to.equal(256);
    expect(embed.allowedParams.dimensions).to.deep.equal({ type: 'integer', min: 1, max: 256 });
    const image = get('sim-image');
    expect(image.family).to.equal('sim-image');
    expect(image.capabilities.imageEdit).to.equal(true);
    expect(image.allowedParams.n).to.deep.equal({ type: 'integer', min: 1, max: 4 });
    expect(image.allowedParams.supported_sizes).to.include.members(['256x256', '512x512', '1024x1024', '1792x1024', 'auto']);
    for (const name of ['output_format', 'response_format', 'quality']) expect(image.allowedParams, name).to.have.property(name);
    const tts = get('sim-tts');
    expect(tts.allowedParams.voice).to.deep.equal(['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer']);
    expect(tts.allowedParams.response_format).to.have.members(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']);
    const video = get('sim-video');
    expect(video.allowedParams.duration).to.deep.equal([2, 4, 5, 8]);
    expect(video.allowedParams.resolution).to.deep.equal(['360p', '480p', '720p']);
    expect(video.allowedParams.aspect_ratio).to.have.members(['16:9', '9:16', '1:1']);
    expect(video.capabilities.imageToVideo).to.equal(true);
    expect(video.allowedParams).to.have.property('person_generation');
    expect(get('sim-music').allowedParams.duration).to.deep.equal({ type: 'integer', min: 5, max: 120 });
  });

  it('gives chat models context windows, output limits and matching token limits', () => {
    for (const r of records.filter((m) => m.modality === 'chat')) {
      expect(r.contextWindow, r.slug).to.be.a('number');
      expect(r.allowedParams.max_tokens, r.slug).to.deep.equal({ type: 'integer', min: 1, max: r.maxOutputTokens });
    }
  });

  it('lets reasoning models refuse sampling parameters', () => {
    for (const slug of ['o1', 'o3', 'o3-mini', 'o4-mini', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-5.1', 'deepseek-reasoner']) {
      expect(get(slug).allowedParams, slug).to.not.have.property('temperature');
    }
    for (const slug of ['o3', 'gpt-5']) expect(get(slug).allowedParams).to.have.property('reasoning_effort');
    expect(get('gpt-4o').allowedParams.temperature).to.deep.equal({ type: 'number', min: 0, max: 2 });
    expect(get('claude-sonnet-4-5').allowedParams.temperature).to.deep.equal({ type: 'number', min: 0, max: 1 });
  });

  it('offers `dimensions` only on embedding models that can shorten their vectors', () => {
    expect(get('text-embedding-3-large').allowedParams.dimensions).to.deep.equal({ type: 'integer', min: 1, max: 3072 });
    expect(get('text-embedding-ada-002').allowedParams).to.not.have.property('dimensions');
    for (const r of records.filter((m) => m.modality === 'embedding')) {
      expect(r.allowedParams.encoding_format, r.slug).to.deep.equal(['float', 'base64']);
    }
  });

  it('marks audio input, vision and image-to-video where the upstream supports them', () => {
    expect(get('gpt-4o-audio-preview').capabilities.audioInput).to.equal(true);
    expect(get('gemini-2.5-pro').capabilities.audioInput).to.equal(true);
    expect(get('gpt-4o').capabilities.vision).to.equal(true);
    expect(get('o3-mini').capabilities.vision).to.equal(false);
    expect(get('veo-3.0-generate-001').capabilities.imageToVideo).to.equal(true);
  });

  it('gives person_generation to Google\'s Veo models only among real video models', () => {
    const video = records.filter((r) => r.modality === 'video' && r.provider !== 'simulated');
    for (const r of video) {
      expect(Boolean(r.allowedParams.person_generation), r.slug).to.equal(r.provider === 'google' && r.slug.startsWith('veo-'));
    }
    expect(list(get('veo-2.0-generate-001').allowedParams.person_generation)).to.deep.equal(['dont_allow', 'allow_adult', 'allow_all']);
  });

  it('keeps speech speed within 0.25 to 4', () => {
    for (const r of records.filter((m) => m.modality === 'speech')) {
      const speed = r.allowedParams.speed;
      if (!speed || Array.isArray(speed)) continue;
      expect(speed.min, r.slug).to.be.at.least(0.25);
      expect(speed.max, r.slug).to.be.at.most(4);
    }
  });
});
