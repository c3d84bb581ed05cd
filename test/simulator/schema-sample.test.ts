import { expect } from 'chai';
import { sampleFromSchema } from '../../simulator/schema-sample';

describe('simulated provider: schema samples', () => {
  const hints = { text: 'weather in Paris' };

  it('fills required properties by type, enum, const and bounds', () => {
    const value = sampleFromSchema({
      type: 'object',
      properties: {
        city: { type: 'string', maxLength: 7 },
        count: { type: 'integer', exclusiveMinimum: 2 },
        ratio: { type: 'number', maximum: 0.5 },
        unit: { enum: ['c', 'f'] },
        version: { const: 2 },
        flags: { type: 'array', items: { type: 'boolean' }, minItems: 3 },
        when: { type: 'string', format: 'date-time' },
        optional: { type: 'string' },
      },
      required: ['city', 'count', 'ratio', 'unit', 'version', 'flags', 'when'],
    }, hints);
    expect(value).to.deep.equal({ city: 'weather', count: 3, ratio: 0.5, unit: 'c', version: 2, flags: [true, true, true], when: '2025-01-01T12:00:00Z' });
  });

  it('follows local $refs, anyOf and nullable types', () => {
    const value = sampleFromSchema({
      $defs: { place: { type: 'object', properties: { name: { type: ['string', 'null'] } }, required: ['name'] } },
      type: 'object',
      properties: { where: { $ref: '#/$defs/place' }, either: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 5 }] } },
      required: ['where', 'either'],
    }, hints);
    expect(value).to.deep.equal({ where: { name: 'weather in Paris' }, either: 5 });
  });
});
