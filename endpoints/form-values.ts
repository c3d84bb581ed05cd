/**
 * Multipart forms carry every value as text. Before a form is validated against an endpoint's JSON
 * Schema, the fields the schema types as numbers, booleans or arrays are turned into those types where
 * the text reads as one (what does not stays text, and the schema then names it). Fields the schema does
 * not know stay text: the catalog's parameter check reads their string forms.
 */
export function coerceFormFields(fields: Record<string, string | string[]>, properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    const rule = properties[name] as { type?: string | string[]; const?: unknown } | undefined;
    const types = rule ? [rule.type ?? typeof rule.const].flat() : [];
    if (types.includes('array')) {
      out[name] = [value].flat();
      continue;
    }
    if (Array.isArray(value)) {
      out[name] = value;
      continue;
    }
    out[name] = coerceScalar(value, types);
  }
  return out;
}

function coerceScalar(value: string, types: string[]): unknown {
  const trimmed = value.trim();
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
  if (types.includes('boolean') && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return value;
}
