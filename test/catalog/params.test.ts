import { expect } from 'chai';
import { loadCatalogFiles } from '../../catalog/load';
import { allowedValues, supportedParamNames, validateModelParams } from '../../catalog/params';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError } from '../../core/errors';

function refusal(record: ModelRecord, params: Record<string, unknown>): InvalidRequestError {
  try {
    validateModelParams(record, params);
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidRequestError);
    return err as InvalidRequestError;
  }
  throw new Error(`expected ${JSON.stringify(params)} to be refused by ${record.slug}`);
}

describe('validateModelParams', () => {
  const bySlug = new Map(loadCatalogFiles().map((r) => [r.slug, r]));
  const model = (slug: string) => bySlug.get(slug)!;

  it('refuses a parameter the model does not list, naming it and what the model takes', () => {
    const err = refusal(model('dall-e-3'), { background: 'transparent' });
    expect(err.message).to.equal("Model 'dall-e-3' does not support 'background'. Supported parameters: n, size, quality, style, response_format.");
    expect(err.param).to.equal('background');
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('unsupported_parameter');
  });

  it('accepts harmless client defaults a model cannot use, without passing them on, and refuses other values', () => {
    // LangChain's DALL-E wrapper sends style and quality "standard" whatever the model; OpenAI accepts both for dall-e-2.
    expect(validateModelParams(model('dall-e-2'), { style: 'vivid', quality: 'standard', size: '512x512' })).to.deep.equal({ n: 1, size: '512x512', response_format: 'url' });
    expect(refusal(model('dall-e-2'), { quality: 'hd' }).param).to.equal('quality');
    expect(validateModelParams(model('sim-image'), { style: 'natural' })).to.not.have.property('style');
    expect(refusal(model('gpt-image-1'), { style: 'vivid' }).code).to.equal('unsupported_parameter');
    expect(validateModelParams(model('dall-e-3'), { style: 'natural' })).to.include({ style: 'natural' });
  });

  it('refuses a value outside the list, listing the allowed ones', () => {
    const err = refusal(model('dall-e-3'), { size: '512x512' });
    expect(err.message).to.equal("Invalid 'size' for model 'dall-e-3': '512x512'. Allowed values: 1024x1024, 1792x1024, 1024x1792.");
    expect(err.param).to.equal('size');
    expect(err.code).to.equal('invalid_value');
  });

  it('checks sizes against supported_sizes and never takes supported_sizes itself', () => {
    expect(validateModelParams(model('gpt-image-1'), { size: '1536x1024' }).size).to.equal('1536x1024');
    expect(refusal(model('gpt-image-1'), { supported_sizes: ['auto'] }).param).to.equal('supported_sizes');
    expect(supportedParamNames(model('dall-e-2'))).to.deep.equal(['n', 'size', 'response_format']);
    expect(allowedValues(model('dall-e-2'), 'size')).to.deep.equal(['256x256', '512x512', '1024x1024']);
  });

  it('checks integer and number types and their ranges', () => {
    expect(refusal(model('dall-e-2'), { n: 11 }).message).to.equal("Invalid 'n' for model 'dall-e-2': 11. Must be an integer from 1 to 10.");
    expect(refusal(model('dall-e-2'), { n: 1.5 }).message).to.match(/Expected an integer\.$/);
    expect(refusal(model('dall-e-2'), { n: 0 }).param).to.equal('n');
    expect(refusal(model('dall-e-3'), { n: 2 }).message).to.equal("Invalid 'n' for model 'dall-e-3': 2. The only accepted value is 1.");
    expect(refusal(model('gpt-4o'), { temperature: 2.5 }).message).to.equal("Invalid 'temperature' for model 'gpt-4o': 2.5. Must be a number from 0 to 2.");
    expect(refusal(model('gpt-4o'), { temperature: 'warm' }).message).to.match(/'warm'\. Expected a number\.$/);
    expect(refusal(model('tts-1'), { speed: 4.5 }).param).to.equal('speed');
    expect(refusal(model('eleven_multilingual_v2'), { speed: 2 }).message).to.match(/Must be a number from 0.7 to 1.2/);
  });

  it('refuses sampling parameters on reasoning models', () => {
    const err = refusal(model('o3'), { temperature: 0.2 });
    expect(err.message).to.match(/^Model 'o3' does not support 'temperature'\. Supported parameters: .*reasoning_effort/);
  });

  it('checks string length and array length', () => {
    expect(refusal(model('gpt-4o-mini-tts'), { instructions: 'x'.repeat(4097) }).message)
      .to.equal("Invalid 'instructions' for model 'gpt-4o-mini-tts': longer than 4096 characters (got 4097).");
    expect(refusal(model('gpt-4o'), { stop: ['a', 'b', 'c', 'd', 'e'] }).message)
      .to.equal("Invalid 'stop' for model 'gpt-4o': at most 4 entries are allowed, got 5.");
    expect(validateModelParams(model('gpt-4o'), { stop: 'END' }).stop).to.equal('END');
  });

  it('matches an object value by its type (response_format, tool_choice)', () => {
    const schema = { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } };
    expect(validateModelParams(model('gpt-4o'), { response_format: schema }).response_format).to.deep.equal(schema);
    expect(validateModelParams(model('gpt-4o'), { tool_choice: { type: 'function', function: { name: 'f' } } })).to.have.property('tool_choice');
    const err = refusal(model('deepseek-chat'), { response_format: { type: 'json_schema', json_schema: { name: 'x' } } });
    expect(err.message).to.equal("Invalid 'response_format' for model 'deepseek-chat': type 'json_schema'. Allowed values: text, json_object.");
  });

  it('checks each entry of an array value against a list', () => {
    const whisper = model('whisper-1');
    expect(validateModelParams(whisper, { response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] }).timestamp_granularities)
      .to.deep.equal(['word', 'segment']);
    expect(refusal(whisper, { response_format: 'verbose_json', timestamp_granularities: ['word', 'sentence'] }).message)
      .to.match(/'sentence'\. Allowed values: word, segment\.$/);
  });

  it('enforces requires against the request merged over the defaults', () => {
    const gptImage = model('gpt-image-1');
    const err = refusal(gptImage, { output_compression: 80 });
    expect(err.message).to.equal("Invalid 'output_compression' for model 'gpt-image-1': it applies only when 'output_format' is jpeg or webp; 'output_format' is 'png'.");
    expect(err.param).to.equal('output_compression');
    expect(refusal(gptImage, { output_compression: 80, output_format: 'png' }).param).to.equal('output_compression');
    expect(validateModelParams(gptImage, { output_compression: 80, output_format: 'jpeg' })).to.include({ output_compression: 80, output_format: 'jpeg' });
    expect(refusal(model('whisper-1'), { timestamp_granularities: ['word'] }).message).to.match(/'response_format' is 'json'\.$/);
  });

  it('returns the request merged over the defaults', () => {
    expect(validateModelParams(model('dall-e-3'), { quality: 'hd' })).to.deep.equal({
      n: 1, size: '1024x1024', quality: 'hd', style: 'vivid', response_format: 'url',
    });
    expect(validateModelParams(model('tts-1'), {})).to.deep.equal({ response_format: 'mp3', speed: 1 });
    expect(validateModelParams(model('gpt-4o'), {})).to.deep.equal({});
    expect(validateModelParams(model('dall-e-3'), { style: 'natural' }, { applyDefaults: false })).to.deep.equal({ style: 'natural' });
  });

  it('ignores parameters given as undefined', () => {
    expect(validateModelParams(model('dall-e-3'), { background: undefined, quality: undefined })).to.deep.equal(model('dall-e-3').defaults);
  });

  it('accepts the string forms a multipart form sends and returns typed values', () => {
    expect(validateModelParams(model('whisper-1'), { temperature: '0.2' }).temperature).to.equal(0.2);
    expect(validateModelParams(model('sora-2'), { duration: '8' }).duration).to.equal(8);
    expect(validateModelParams(model('ray-2'), { loop: 'true' }).loop).to.equal(true);
    expect(refusal(model('ray-2'), { loop: 'yes' }).message).to.match(/Expected a boolean\.$/);
    expect(refusal(model('sora-2'), { duration: '7' }).message).to.equal("Invalid 'duration' for model 'sora-2': '7'. Allowed values: 4, 8, 12.");
  });

  it('validates video, music and embedding parameters per model', () => {
    expect(refusal(model('veo-3.0-generate-001'), { resolution: '4k' }).param).to.equal('resolution');
    expect(validateModelParams(model('veo-3.0-generate-001'), { person_generation: 'dont_allow' })).to.include({ person_generation: 'dont_allow', duration: 8 });
    expect(refusal(model('sora-2'), { person_generation: 'allow_all' }).param).to.equal('person_generation');
    expect(refusal(model('sim-music'), { duration: 121 }).param).to.equal('duration');
    expect(refusal(model('text-embedding-ada-002'), { dimensions: 512 }).param).to.equal('dimensions');
    expect(refusal(model('voyage-3.5'), { dimensions: 300 }).message).to.match(/Allowed values: 256, 512, 1024, 2048\.$/);
    expect(validateModelParams(model('sim-embed'), { dimensions: 64 })).to.deep.equal({ encoding_format: 'float', dimensions: 64 });
  });
});
