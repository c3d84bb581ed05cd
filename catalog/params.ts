/**
 * Checks a request's model-specific parameters against the model record's `allowedParams` and applies its
 * `defaults`. Endpoint schemas check the common shape first; this decides what one model takes.
 * Pure (no I/O) so both the API and workflows may call it.
 */
import { InvalidRequestError } from '../core/errors';
import type { ModelRecord, ParamRule } from './types';

/** The request field `size` is governed by the record's `supported_sizes` (the public name). */
const SIZE_PARAM = 'size';
const SIZE_RULE = 'supported_sizes';

export interface ValidateParamsOptions {
  /** Merge the result over the record's defaults (default true). */
  applyDefaults?: boolean;
}

type ParamValue = unknown;

/**
 * Validates `params` (only the optional, model-specific ones the request carried; undefined entries are
 * ignored) and returns them merged over the record's defaults. Numeric and boolean rules also accept the
 * string forms a multipart form sends; the result carries the typed value.
 * Throws InvalidRequestError with `param` set to the offending parameter.
 */
export function validateModelParams(
  record: ModelRecord,
  params: Record<string, unknown>,
  opts: ValidateParamsOptions = {},
): Record<string, unknown> {
  const checked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || isIgnored(record, name, value)) continue;
    const rule = ruleFor(record, name);
    if (!rule) {
      throw new InvalidRequestError(
        `Model '${record.slug}' does not support '${name}'. Supported parameters: ${supportedParamNames(record).join(', ') || 'none'}.`,
        { param: name, code: 'unsupported_parameter' },
      );
    }
    checked[name] = checkValue(record, name, rule, value);
  }

  const merged = opts.applyDefaults === false ? { ...checked } : { ...(record.defaults ?? {}), ...checked };
  for (const name of Object.keys(checked)) checkRequires(record, name, ruleFor(record, name)!, merged);
  return merged;
}

/** The request parameter names a model takes (`supported_sizes` shown as `size`), in record order. */
export function supportedParamNames(record: ModelRecord): string[] {
  return Object.keys(record.allowedParams).map((name) => (name === SIZE_RULE ? SIZE_PARAM : name));
}

/** The allowed values of a list-valued parameter, or undefined when the parameter is a range or free. */
export function allowedValues(record: ModelRecord, name: string): Array<string | number> | undefined {
  const rule = ruleFor(record, name);
  if (!rule) return undefined;
  return Array.isArray(rule) ? rule : rule.values;
}

/** A harmless value of a parameter the model cannot use (the record's `ignoredParams`): accepted, not sent. */
function isIgnored(record: ModelRecord, name: string, value: unknown): boolean {
  const values = record.ignoredParams?.[name];
  return values !== undefined && (typeof value === 'string' || typeof value === 'number') && values.includes(value);
}

function ruleFor(record: ModelRecord, name: string): ParamRule | undefined {
  if (name === SIZE_RULE) return undefined;
  const key = name === SIZE_PARAM ? SIZE_RULE : name;
  return Object.prototype.hasOwnProperty.call(record.allowedParams, key) ? record.allowedParams[key] : undefined;
}

function checkValue(record: ModelRecord, name: string, rule: ParamRule, value: ParamValue): unknown {
  const values = Array.isArray(rule) ? rule : rule.values;
  const constraints = Array.isArray(rule) ? {} : rule;

  if (Array.isArray(value)) {
    if (constraints.maxItems !== undefined && value.length > constraints.maxItems) {
      throw invalid(record, name, `at most ${constraints.maxItems} ${constraints.maxItems === 1 ? 'entry is' : 'entries are'} allowed, got ${value.length}.`);
    }
    if (values) return value.map((entry) => matchListed(record, name, values, entry));
    return value.map((entry) => checkScalar(record, name, constraints, entry));
  }
  if (values) return matchListed(record, name, values, value);
  return checkScalar(record, name, constraints, value);
}

/** A list accepts a listed scalar, or an object whose `type` is listed (chat response_format, tool_choice). */
function matchListed(record: ModelRecord, name: string, values: Array<string | number>, value: ParamValue): unknown {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const kind = (value as { type?: unknown }).type;
    if (typeof kind === 'string' && values.includes(kind)) return value;
    throw invalid(record, name, `type ${quote(kind)}. Allowed values: ${values.join(', ')}.`);
  }
  if (typeof value === 'string' || typeof value === 'number') {
    if (values.includes(value)) return value;
    // A numeric list (e.g. video durations) also accepts the number's string form.
    if (typeof value === 'string' && value.trim() !== '' && values.includes(Number(value))) return Number(value);
  }
  throw invalidValue(record, name, value, `Allowed values: ${values.join(', ')}.`);
}

function checkScalar(record: ModelRecord, name: string, rule: Exclude<ParamRule, unknown[]>, value: ParamValue): unknown {
  switch (rule.type) {
    case 'integer':
    case 'number': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw invalidValue(record, name, value, `Expected ${rule.type === 'integer' ? 'an integer' : 'a number'}.`);
      if (rule.type === 'integer' && !Number.isInteger(n)) throw invalidValue(record, name, value, 'Expected an integer.');
      // Past 2^53 a JSON integer is no longer the one the client wrote: refused, not sent on changed.
      if (rule.type === 'integer' && !Number.isSafeInteger(n)) throw invalidValue(record, name, value, `Must be an integer from ${-Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}.`);
      if (rule.min !== undefined && n < rule.min) throw invalidValue(record, name, value, rangeText(rule));
      if (rule.max !== undefined && n > rule.max) throw invalidValue(record, name, value, rangeText(rule));
      return n;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      throw invalidValue(record, name, value, 'Expected a boolean.');
    }
    case 'string': {
      if (typeof value !== 'string') throw invalidValue(record, name, value, 'Expected a string.');
      if (rule.maxLength !== undefined && value.length > rule.maxLength) {
        throw invalid(record, name, `longer than ${rule.maxLength} characters (got ${value.length}).`);
      }
      return value;
    }
    default:
      return value;
  }
}

function checkRequires(record: ModelRecord, name: string, rule: ParamRule, merged: Record<string, unknown>): void {
  if (Array.isArray(rule) || !rule.requires) return;
  for (const [other, accepted] of Object.entries(rule.requires)) {
    const actual = merged[other];
    if (typeof actual === 'string' || typeof actual === 'number' ? accepted.includes(actual) : false) continue;
    const got = actual === undefined ? `'${other}' is not set` : `'${other}' is ${quote(actual)}`;
    throw new InvalidRequestError(
      `Invalid '${name}' for model '${record.slug}': it applies only when '${other}' is ${accepted.join(' or ')}; ${got}.`,
      { param: name, code: 'invalid_value' },
    );
  }
}

function rangeText(rule: { type?: string; min?: number; max?: number }): string {
  const kind = rule.type === 'integer' ? 'an integer' : 'a number';
  if (rule.min !== undefined && rule.min === rule.max) return `The only accepted value is ${rule.min}.`;
  if (rule.min !== undefined && rule.max !== undefined) return `Must be ${kind} from ${rule.min} to ${rule.max}.`;
  if (rule.min !== undefined) return `Must be ${kind} of at least ${rule.min}.`;
  return `Must be ${kind} of at most ${rule.max}.`;
}

function invalidValue(record: ModelRecord, name: string, value: ParamValue, detail: string): InvalidRequestError {
  return invalid(record, name, `${quote(value)}. ${detail}`);
}

function invalid(record: ModelRecord, name: string, detail: string): InvalidRequestError {
  return new InvalidRequestError(`Invalid '${name}' for model '${record.slug}': ${detail}`, { param: name, code: 'invalid_value' });
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? `'${value}'` : JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
