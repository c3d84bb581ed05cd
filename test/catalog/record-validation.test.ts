import { expect } from 'chai';
import { validateModelRecord } from '../../catalog/load';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError } from '../../core/errors';

function imageRecord(): ModelRecord {
  return {
    slug: 'test-image',
    name: 'Test Image',
    provider: 'simulated',
    upstreamId: 'test-image',
    modality: 'image',
    family: 'test-image',
    ownedBy: 'simulated',
    created: 1735732800,
    capabilities: { imageEdit: true },
    pricing: { perImage: { 'hd:*': 2, '*:*': 1 } },
    allowedParams: {
      n: { type: 'integer', min: 1, max: 4 },
      supported_sizes: ['1024x1024', '1792x1024'],
      quality: ['standard', 'hd'],
      output_format: ['png', 'jpeg'],
      output_compression: { type: 'integer', min: 0, max: 100, requires: { output_format: ['jpeg'] } },
    },
    defaults: { n: 1, size: '1024x1024', quality: 'standard' },
  };
}

function problemsOf(record: unknown): string {
  try {
    validateModelRecord(record);
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidRequestError);
    return (err as Error).message;
  }
  throw new Error('expected the record to be refused');
}

describe('validateModelRecord', () => {
  it('accepts a well-formed record and returns it', () => {
    const record = imageRecord();
    expect(validateModelRecord(record)).to.equal(record);
  });

  it('refuses fields the schema does not know, naming them', () => {
    expect(problemsOf({ ...imageRecord(), color: 'blue' })).to.match(/Invalid model record 'test-image': \/ must NOT have additional properties \('color'\)/);
    expect(problemsOf({ ...imageRecord(), pricing: { perImage: { '*:*': 1 }, perPixel: 1 } })).to.match(/\/pricing must NOT have additional properties/);
  });

  it('requires the fields of the modality', () => {
    const { family: _family, ...noFamily } = imageRecord();
    expect(problemsOf(noFamily)).to.match(/must have required property 'family'/);
    const chat = { ...imageRecord(), modality: 'chat', family: undefined, pricing: { inputPerMTok: 1 } };
    expect(problemsOf(JSON.parse(JSON.stringify(chat)))).to.match(/contextWindow/);
  });

  it('refuses prices finer than one micro-credit', () => {
    expect(problemsOf({ ...imageRecord(), pricing: { perImage: { '*:*': 0.0000001 } } })).to.match(/finer than one micro-credit/);
  });

  it('refuses an image size without a price', () => {
    expect(problemsOf({ ...imageRecord(), pricing: { perImage: { 'hd:*': 2, 'standard:1024x1024': 1 } } }))
      .to.match(/no image price for quality 'standard' at size '1792x1024'/);
  });

  it('refuses defaults that break the record\'s own rules', () => {
    expect(problemsOf({ ...imageRecord(), defaults: { size: '512x512' } })).to.match(/defaults: Invalid 'size'/);
    expect(problemsOf({ ...imageRecord(), defaults: { style: 'vivid' } })).to.match(/defaults: Model 'test-image' does not support 'style'/);
  });

  it('refuses a requires naming a parameter the model does not take', () => {
    const record = imageRecord();
    record.allowedParams.output_compression = { type: 'integer', min: 0, max: 100, requires: { background: ['opaque'] } };
    expect(problemsOf(record)).to.match(/requires 'background', which the model does not take/);
  });

  it('refuses capabilities that disagree with the parameters', () => {
    const chat: ModelRecord = {
      slug: 'test-chat', name: 'Test Chat', provider: 'simulated', upstreamId: 'test-chat', modality: 'chat', ownedBy: 'simulated',
      created: 1735732800, capabilities: { tools: true, jsonMode: false }, contextWindow: 1000, maxOutputTokens: 100,
      pricing: { inputPerMTok: 1, outputPerMTok: 2 }, allowedParams: { max_tokens: { type: 'integer', min: 1, max: 200 } },
    };
    const message = problemsOf(chat);
    expect(message).to.match(/capabilities\.tools disagrees/);
    expect(message).to.match(/max_tokens allows more than maxOutputTokens/);
  });
});
