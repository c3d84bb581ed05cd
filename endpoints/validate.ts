/**
 * Request validation with ajv: one compiled validator per endpoint schema. The first problem becomes a 400
 * in OpenAI's shape, naming the parameter (as a dotted path) the way OpenAI's own errors do.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { InvalidRequestError } from '../core/errors';

const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });

/**
 * Bounds of numbers no field states a tighter one for. JSON numbers are doubles: beyond 2^53 an integer is
 * no longer the one the client wrote, so a `seed` is refused there rather than sent on changed.
 */
export const SAFE_INTEGER = { minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } as const;
/** A token id: no model's vocabulary is near 2^31. */
export const MAX_TOKEN_ID = 2_147_483_647;
/** A token count a request may ask for (max_tokens and the like; each model's own limit is in its record). */
export const MAX_TOKEN_COUNT = 100_000_000;

export function compileSchema<T>(schema: object): (body: unknown) => T {
  const validate: ValidateFunction = ajv.compile(schema);
  return (body: unknown) => {
    if (!validate(body)) throw toInvalidRequest(validate.errors?.[0]);
    return body as T;
  };
}

/**
 * For a tagged object (`{type: "json_schema", json_schema: {...}}`): each listed tag requires the property
 * of the same name, so a body that names a kind of part without its content is a 400, not a crash later.
 */
export function requireTaggedProperty(tags: readonly string[], tagField = 'type') {
  return tags.map((tag) => ({
    if: { properties: { [tagField]: { const: tag } }, required: [tagField] },
    then: requiredProperty(tag),
  }));
}

/** `{required: [name]}` in a subschema (ajv's strict mode wants the property named beside it too). */
export function requiredProperty(name: string) {
  return { properties: { [name]: true }, required: [name] };
}

function toInvalidRequest(error: ErrorObject | undefined): InvalidRequestError {
  if (!error) return new InvalidRequestError('Invalid request body.');
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join('');
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    const param = path ? `${path}.${missing}` : missing;
    return new InvalidRequestError(`Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    const param = path ? `${path}.${extra}` : extra;
    return new InvalidRequestError(`Unrecognized request argument supplied: '${param}'.`, { param, code: 'unknown_parameter' });
  }
  const param = path || null;
  let detail = error.message ?? 'is invalid';
  if (error.keyword === 'enum') detail = `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  if (error.keyword === 'type') detail = `must be of type ${(error.params as { type: string }).type}`;
  return new InvalidRequestError(`Invalid value for '${param ?? 'body'}': ${detail}.`, { param, code: error.keyword === 'type' ? 'invalid_type' : 'invalid_value' });
}
