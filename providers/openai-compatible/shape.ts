/** Small type guards for checking upstream bodies before we trust their fields. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isOptionalString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === 'string';
}

export function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** A token count from a usage object; hosts sometimes omit fields, which then count as zero. */
export function tokenCount(value: unknown): number {
  return isFiniteNumber(value) && value > 0 ? Math.round(value) : 0;
}
