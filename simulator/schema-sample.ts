/**
 * Builds a value that satisfies a JSON Schema's structural rules (types, required properties, enums,
 * bounds, array sizes, local $refs), for simulated tool-call arguments and json_schema answers.
 * Patterns and formats beyond the common ones are not attempted.
 */

type Schema = Record<string, unknown>;

export interface SampleHints {
  /** Text to use for free-form strings (the user's message, shortened). */
  text: string;
}

export function sampleFromSchema(schema: unknown, hints: SampleHints): unknown {
  return sample(asSchema(schema), asSchema(schema), hints, 0, '');
}

function sample(schema: Schema, root: Schema, hints: SampleHints, depth: number, key: string): unknown {
  if (depth > 8) return null;
  if (typeof schema.$ref === 'string') return sample(resolveRef(schema.$ref, root), root, hints, depth + 1, key);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const combinator of ['anyOf', 'oneOf'] as const) {
    const options = schema[combinator];
    if (Array.isArray(options) && options.length > 0) {
      const preferred = options.find((o) => asSchema(o).type !== 'null') ?? options[0];
      return sample({ ...withoutKeys(schema, [combinator]), ...asSchema(preferred) }, root, hints, depth + 1, key);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const merged = schema.allOf.reduce<Schema>((acc, part) => mergeSchemas(acc, asSchema(part)), withoutKeys(schema, ['allOf']));
    return sample(merged, root, hints, depth + 1, key);
  }
  switch (pickType(schema)) {
    case 'object': return sampleObject(schema, root, hints, depth);
    case 'array': {
      const minItems = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
      const count = Math.min(Math.max(1, minItems), maxItems);
      const items = asSchema(Array.isArray(schema.items) ? schema.items[0] : schema.items);
      return Array.from({ length: count }, () => sample(items, root, hints, depth + 1, key));
    }
    case 'integer': return Math.ceil(sampleNumber(schema));
    case 'number': return sampleNumber(schema);
    case 'boolean': return true;
    case 'null': return null;
    default: return sampleString(schema, hints, key);
  }
}

function sampleObject(schema: Schema, root: Schema, hints: SampleHints, depth: number): Record<string, unknown> {
  const properties = asSchema(schema.properties);
  const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === 'string') : [];
  // Required keys make a valid object; with none, fill the first property so the answer says something.
  const keys = required.length > 0 ? required : Object.keys(properties).slice(0, 1);
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = sample(asSchema(properties[key]), root, hints, depth + 1, key);
  return out;
}

function sampleNumber(schema: Schema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined;
  if (min !== undefined) return min;
  if (max !== undefined) return Math.min(1, max);
  return 1;
}

function sampleString(schema: Schema, hints: SampleHints, key: string): string {
  switch (schema.format) {
    case 'date-time': return '2025-01-01T12:00:00Z';
    case 'date': return '2025-01-01';
    case 'time': return '12:00:00';
    case 'email': return 'someone@example.com';
    case 'uri':
    case 'url': return 'https://example.com/';
    case 'uuid': return '00000000-0000-4000-8000-000000000000';
    default: break;
  }
  let text = hints.text.trim() || (key ? `sample ${key}` : 'sample');
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : 200;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  text = Array.from(text).slice(0, maxLength).join('');
  while (text.length < minLength) text += 'x';
  return text;
}

function pickType(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') ?? type[0]) as string | undefined;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return undefined;
}

function resolveRef(ref: string, root: Schema): Schema {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    node = asSchema(node)[decodeURIComponent(part.replace(/~1/g, '/').replace(/~0/g, '~'))];
  }
  return asSchema(node);
}

function mergeSchemas(a: Schema, b: Schema): Schema {
  const merged: Schema = { ...a, ...b };
  if (a.properties || b.properties) merged.properties = { ...asSchema(a.properties), ...asSchema(b.properties) };
  if (Array.isArray(a.required) || Array.isArray(b.required)) merged.required = [...new Set([...(Array.isArray(a.required) ? a.required : []), ...(Array.isArray(b.required) ? b.required : [])])];
  return merged;
}

function withoutKeys(schema: Schema, keys: string[]): Schema {
  const copy = { ...schema };
  for (const key of keys) delete copy[key];
  return copy;
}

function asSchema(value: unknown): Schema {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : {};
}
