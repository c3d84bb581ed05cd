import { expect } from 'chai';
import { loadCatalogFiles } from '../../catalog/load';
import { validateModelParams } from '../../catalog/params';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError } from '../../core/errors';

/**
 * The spec's per-family image parameters (POST /v1/images/generations) and the families that take them;
 * catalog/README.md gives the reasoning. A row names families, or single models where the spec speaks of
 * "some models" or "two versions of one family".
 */
interface SpecRow {
  param: string;
  request: Record<string, unknown>;
  families?: string[];
  models?: string[];
}

const GOOGLE_IMAGE_FAMILIES = ['imagen-3', 'imagen-4', 'gemini-image', 'gemini-3-pro-image'];

const SPEC_TABLE: SpecRow[] = [
  { param: 'quality', request: { quality: 'hd' }, families: ['dall-e-3'] },
  { param: 'quality', request: { quality: 'standard' }, families: ['dall-e-3'] },
  { param: 'quality', request: { quality: 'medium' }, families: ['gpt-image'] },
  { param: 'quality', request: { quality: 'auto' }, families: ['gpt-image'] },
  { param: 'style', request: { style: 'natural' }, families: ['dall-e-3'] },
  { param: 'response_format', request: { response_format: 'b64_json' }, families: ['dall-e-2', 'dall-e-3'] },
  { param: 'response_format', request: { response_format: 'url' }, families: ['dall-e-2', 'dall-e-3'] },
  { param: 'aspect_ratio', request: { aspect_ratio: '16:9' }, families: GOOGLE_IMAGE_FAMILIES },
  { param: 'image_size', request: { image_size: '2K' }, models: ['imagen-4.0-generate-001', 'imagen-4.0-ultra-generate-001', 'gemini-3-pro-image-preview'] },
  { param: 'image_size', request: { image_size: '4K' }, models: ['gemini-3-pro-image-preview'] },
  { param: 'person_generation', request: { person_generation: 'dont_allow' }, families: ['imagen-3', 'imagen-4'] },
  { param: 'background', request: { background: 'transparent' }, families: ['gpt-image'] },
  { param: 'output_format', request: { output_format: 'webp' }, families: ['gpt-image'] },
  { param: 'output_compression', request: { output_compression: 50, output_format: 'jpeg' }, families: ['gpt-image'] },
  { param: 'input_fidelity', request: { input_fidelity: 'high' }, models: ['gpt-image-1', 'gpt-image-1.5'] },
  { param: 'moderation', request: { moderation: 'low' }, families: ['gpt-image'] },
  { param: 'negative_prompt', request: { negative_prompt: 'blurry' }, families: ['imagen-3'] },
  { param: 'seed', request: { seed: 42 }, families: ['imagen-3'] },
];

const N_MAX_BY_FAMILY: Record<string, number> = { 'dall-e-3': 1, 'imagen-3': 4, 'imagen-4': 4, 'gpt-image': 10, 'dall-e-2': 10 };

const KNOWN_FAMILIES = [
  'dall-e-2', 'dall-e-3', 'gpt-image', ...GOOGLE_IMAGE_FAMILIES,
  'flux-pro', 'flux-ultra', 'flux-dev', 'flux-kontext', 'stable-image', 'sd3.5', 'sim-image',
];

/** `ignored`: accepted as a harmless client default the model cannot use (its `ignoredParams`), and not passed on. */
function outcome(record: ModelRecord, request: Record<string, unknown>): 'accepted' | 'ignored' | string {
  try {
    const params = validateModelParams(record, request, { applyDefaults: false });
    return Object.keys(request).every((name) => name in params) ? 'accepted' : 'ignored';
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidRequestError);
    return `refused ${(err as InvalidRequestError).param}`;
  }
}

describe('image families against the spec', () => {
  const images = loadCatalogFiles().filter((r) => r.modality === 'image');
  const real = images.filter((r) => r.provider !== 'simulated');
  const family = (name: string) => images.filter((r) => r.family === name);

  it('knows every image family of the catalog', () => {
    expect([...new Set(images.map((r) => r.family))].sort()).to.deep.equal([...KNOWN_FAMILIES].sort());
  });

  for (const row of SPEC_TABLE) {
    const owners = row.families ? `families ${row.families.join(', ')}` : `models ${row.models!.join(', ')}`;
    it(`accepts ${JSON.stringify(row.request)} on ${owners} only`, () => {
      for (const record of real) {
        const owns = row.families ? row.families.includes(record.family!) : row.models!.includes(record.slug);
        const harmless = Object.entries(row.request).every(([name, value]) => record.ignoredParams?.[name]?.includes(value as string));
        expect(outcome(record, row.request), record.slug).to.equal(owns ? 'accepted' : harmless ? 'ignored' : `refused ${row.param}`);
      }
    });
  }

  it('has the n maxima 1 / 4 / 4 / 10 across the four spec families', () => {
    for (const [name, max] of Object.entries(N_MAX_BY_FAMILY)) {
      for (const record of family(name)) {
        expect(record.allowedParams.n, record.slug).to.deep.equal({ type: 'integer', min: 1, max });
        expect(outcome(record, { n: max }), record.slug).to.equal('accepted');
        expect(outcome(record, { n: max + 1 }), record.slug).to.equal('refused n');
      }
    }
  });

  it('gives GPT Image exactly 1024x1024, 1024x1536, 1536x1024 and auto', () => {
    for (const record of family('gpt-image')) {
      expect(record.allowedParams.supported_sizes).to.deep.equal(['1024x1024', '1024x1536', '1536x1024', 'auto']);
    }
  });

  it('gives the DALL-E line the sizes from 256x256 up to 1792x1024', () => {
    const sizes = [...family('dall-e-2'), ...family('dall-e-3')].flatMap((r) => r.allowedParams.supported_sizes as string[]);
    expect([...new Set(sizes)]).to.have.members(['256x256', '512x512', '1024x1024', '1792x1024', '1024x1792']);
    expect(outcome(family('dall-e-3')[0], { size: '512x512' })).to.equal('refused size');
    for (const record of real.filter((r) => !r.family!.startsWith('dall-e'))) {
      expect(record.allowedParams.supported_sizes, record.slug).to.not.include('256x256');
    }
  });

  it('lets the FLUX and Stability families take only n, size and parameters the spec does not name', () => {
    const specNamed = new Set(SPEC_TABLE.map((row) => row.param));
    for (const record of real.filter((r) => /^(flux|stable|sd)/.test(r.family!))) {
      const named = Object.keys(record.allowedParams).filter((name) => specNamed.has(name));
      expect(named, record.slug).to.deep.equal([]);
    }
  });

  it('lets sim-image show quality, response and output formats but not the other families\' parameters', () => {
    const [sim] = family('sim-image');
    for (const request of [{ quality: 'hd' }, { response_format: 'b64_json' }, { output_format: 'webp', output_compression: 80 }, { size: 'auto', n: 4 }]) {
      expect(outcome(sim, request), JSON.stringify(request)).to.equal('accepted');
    }
    for (const param of ['style', 'background', 'aspect_ratio', 'person_generation', 'negative_prompt']) {
      expect(outcome(sim, { [param]: 'x' })).to.equal(`refused ${param}`);
    }
  });
});
