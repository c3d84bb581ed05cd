import { expect } from 'chai';
import { loadCatalogFiles } from '../../../catalog/load';
import { imageCost } from '../../../catalog/pricing';
import type { ModelRecord } from '../../../catalog/types';
import { imageDelivery, imageEditsHandler, imageGenerationsHandler } from '../../../endpoints/images/handler';
import { InvalidRequestError } from '../../../core/errors';

const images = loadCatalogFiles().filter((r) => r.modality === 'image');
const bySlug = (slug: string) => images.find((r) => r.slug === slug)!;

function refusal(fn: () => unknown): { param: string | null; code: string | null } | null {
  try {
    fn();
    return null;
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidRequestError);
    return { param: (err as InvalidRequestError).param, code: (err as InvalidRequestError).code };
  }
}

describe('image endpoint handlers', () => {
  describe('check and estimate, for every image model in the catalog', () => {
    for (const record of images) {
      it(`${record.slug}: its sizes and n up to its maximum are priced; n past it and other sizes are refused`, () => {
        const max = (record.allowedParams.n as { max: number }).max;
        for (const size of record.allowedParams.supported_sizes as string[]) {
          const body = { model: record.slug, prompt: 'p', size, n: max };
          expect(refusal(() => imageGenerationsHandler.check(record, body))).to.equal(null);
          const merged = { ...(record.defaults ?? {}), size, n: max } as Record<string, unknown>;
          expect(imageGenerationsHandler.estimate(record, body)).to.equal(imageCost(record, merged));
        }
        expect(refusal(() => imageGenerationsHandler.check(record, { model: record.slug, prompt: 'p', n: max + 1 }))).to.deep.equal({ param: 'n', code: 'invalid_value' });
        expect(refusal(() => imageGenerationsHandler.check(record, { model: record.slug, prompt: 'p', size: '7x7' }))).to.deep.equal({ param: 'size', code: 'invalid_value' });
        expect(refusal(() => imageGenerationsHandler.check(record, { model: record.slug, prompt: 'p', made_up: 1 }))).to.deep.equal({ param: 'made_up', code: 'unsupported_parameter' });
      });

      it(`${record.slug}: edits ${record.capabilities.imageEdit ? 'accepted' : 'refused'}, stream ${record.capabilities.streaming ? 'accepted' : 'refused'}, as the record says`, () => {
        const edit = refusal(() => imageEditsHandler.check(record, { model: record.slug, prompt: 'p', image: [] }));
        expect(edit).to.deep.equal(record.capabilities.imageEdit ? null : { param: 'model', code: 'model_not_supported' });
        const stream = refusal(() => imageGenerationsHandler.check(record, { model: record.slug, prompt: 'p', stream: true }));
        expect(stream).to.deep.equal(record.capabilities.streaming ? null : { param: 'stream', code: 'unsupported_parameter' });
      });
    }
  });

  it('prices n images at the requested quality and size', () => {
    const dalle3 = bySlug('dall-e-3');
    expect(imageGenerationsHandler.estimate(dalle3, { model: 'dall-e-3', prompt: 'p' })).to.equal(4_000_000);
    expect(imageGenerationsHandler.estimate(dalle3, { model: 'dall-e-3', prompt: 'p', quality: 'hd', size: '1024x1792' })).to.equal(12_000_000);
    const gpt = bySlug('gpt-image-1');
    // Defaults (auto quality, auto size) reserve the most the upstream may bill.
    expect(imageGenerationsHandler.estimate(gpt, { model: 'gpt-image-1', prompt: 'p', n: 3 })).to.equal(75_000_000);
    expect(imageGenerationsHandler.estimate(gpt, { model: 'gpt-image-1', prompt: 'p', quality: 'low', size: '1024x1024' })).to.equal(1_100_000);
  });

  it('delivers URLs by default, base64 when asked, and always base64 for GPT Image', () => {
    const params = (record: ModelRecord, request: Record<string, unknown>) => ({ ...(record.defaults ?? {}), ...request });
    expect(imageDelivery(bySlug('dall-e-3'), params(bySlug('dall-e-3'), {}))).to.equal('url');
    expect(imageDelivery(bySlug('dall-e-2'), params(bySlug('dall-e-2'), { response_format: 'b64_json' }))).to.equal('b64_json');
    expect(imageDelivery(bySlug('gpt-image-1'), params(bySlug('gpt-image-1'), {}))).to.equal('b64_json');
    expect(imageDelivery(bySlug('imagen-4.0-generate-001'), params(bySlug('imagen-4.0-generate-001'), {}))).to.equal('url');
  });
});
