/**
 * Validation of one model record: the JSON Schema (shape) and the cross-field rules a schema cannot say
 * (every price exact to the micro-credit, every image size priced, defaults that pass the model's own
 * rules, capabilities that agree with the parameters).
 */
import Ajv from 'ajv';
import { InvalidRequestError } from '../core/errors';
import schema from './model-record.schema.json';
import { validateModelParams } from './params';
import { creditsToMicro, imageUnitPrice } from './pricing';
import type { ModelRecord, ParamRule } from './types';

// strictRequired off: the per-modality `then` clauses require fields declared at the top level.
const ajv = new Ajv({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
const checkShape = ajv.compile<ModelRecord>(schema);

/**
 * Throws InvalidRequestError listing every problem of the record (operator-supplied records are refused
 * with the same message the catalog files get). Returns the record, typed.
 */
export function validateModelRecord(record: unknown): ModelRecord {
  const slug = typeof (record as { slug?: unknown })?.slug === 'string' ? (record as { slug: string }).slug : '(no slug)';
  if (!checkShape(record)) {
    const problems = (checkShape.errors ?? []).map((e) => {
      const extra = e.keyword === 'additionalProperties' ? ` ('${(e.params as { additionalProperty: string }).additionalProperty}')` : '';
      return `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${extra}`;
    });
    throw new InvalidRequestError(`Invalid model record '${slug}': ${unique(problems).join('; ')}`);
  }
  const problems = crossFieldProblems(record);
  if (problems.length > 0) throw new InvalidRequestError(`Invalid model record '${slug}': ${problems.join('; ')}`);
  return record;
}

function crossFieldProblems(record: ModelRecord): string[] {
  const problems: string[] = [];
  const { pricing, allowedParams: params, capabilities } = record;

  for (const [field, price] of Object.entries(pricing)) {
    const prices = typeof price === 'number' ? { '': price } : (price as Record<string, number>);
    for (const [key, value] of Object.entries(prices)) {
      try { creditsToMicro(value); } catch { problems.push(`pricing.${field}${key ? `['${key}']` : ''} ${value} is finer than one micro-credit`); }
    }
  }
  // The checks below look prices up; they only make sense once every price converts.
  if (problems.length > 0) return problems;

  for (const [name, rule] of Object.entries(params)) problems.push(...ruleProblems(name, rule, params));
  for (const name of Object.keys(record.ignoredParams ?? {})) {
    if (params[name]) problems.push(`ignoredParams.${name}: the model takes '${name}'; list its values in allowedParams instead`);
  }

  if (record.defaults) {
    try {
      validateModelParams(record, record.defaults, { applyDefaults: false });
    } catch (err) {
      problems.push(`defaults: ${(err as Error).message}`);
    }
  }

  if (record.contextWindow !== undefined && record.maxOutputTokens !== undefined && record.maxOutputTokens > record.contextWindow) {
    problems.push('maxOutputTokens exceeds contextWindow');
  }
  if (capabilities.imageEdit && record.modality !== 'image') problems.push('imageEdit applies to image models only');
  if (capabilities.imageToVideo && record.modality !== 'video') problems.push('imageToVideo applies to video models only');
  if (capabilities.imageVariation && record.modality !== 'image') problems.push('imageVariation applies to image models only');
  if (capabilities.translation && record.modality !== 'transcription') problems.push('translation applies to transcription models only');
  if (capabilities.tokenInput && record.modality !== 'embedding') problems.push('tokenInput applies to embedding models only');

  switch (record.modality) {
    case 'chat': problems.push(...chatProblems(record)); break;
    case 'image': problems.push(...imageProblems(record)); break;
    case 'video': problems.push(...videoProblems(record)); break;
    default: break;
  }
  return problems;
}

function ruleProblems(name: string, rule: ParamRule, params: Record<string, ParamRule>): string[] {
  if (Array.isArray(rule)) return [];
  const problems: string[] = [];
  if (rule.min !== undefined && rule.max !== undefined && rule.min > rule.max) problems.push(`allowedParams.${name}: min exceeds max`);
  for (const other of Object.keys(rule.requires ?? {})) {
    if (!params[other]) problems.push(`allowedParams.${name} requires '${other}', which the model does not take`);
  }
  return problems;
}

function chatProblems(record: ModelRecord): string[] {
  const problems: string[] = [];
  const params = record.allowedParams;
  for (const name of ['max_tokens', 'max_completion_tokens']) {
    const rule = params[name];
    if (rule && !Array.isArray(rule) && rule.max !== undefined && rule.max > (record.maxOutputTokens ?? Infinity)) {
      problems.push(`allowedParams.${name} allows more than maxOutputTokens`);
    }
  }
  if (Boolean(record.capabilities.tools) !== Boolean(params.tools)) problems.push('capabilities.tools disagrees with allowedParams.tools');
  const formats = listOf(params.response_format);
  const json = formats.some((f) => f === 'json_object' || f === 'json_schema');
  if (Boolean(record.capabilities.jsonMode) !== json) problems.push('capabilities.jsonMode disagrees with allowedParams.response_format');
  return problems;
}

function imageProblems(record: ModelRecord): string[] {
  const problems: string[] = [];
  const params = record.allowedParams;
  const n = params.n;
  if (Array.isArray(n) || n?.type !== 'integer' || n.min !== 1 || n.max === undefined) {
    problems.push('allowedParams.n must be {"type":"integer","min":1,"max":N}');
  }
  const sizes = listOf(params.supported_sizes).map(String);
  const qualities = [...listOf(params.quality), ...listOf(params.image_size)].map(String);
  for (const key of Object.keys(record.pricing.perImage ?? {})) {
    const [quality, size] = key.split(':');
    if (quality !== '*' && !qualities.includes(quality)) problems.push(`pricing.perImage['${key}'] names an unknown quality`);
    if (size !== '*' && !sizes.includes(size)) problems.push(`pricing.perImage['${key}'] names an unsupported size`);
  }
  for (const quality of qualities.length > 0 ? qualities : [undefined]) {
    for (const size of sizes) {
      if (imageUnitPrice(record, quality, size) === undefined) problems.push(`no image price for quality '${quality ?? '*'}' at size '${size}'`);
    }
  }
  return problems;
}

function videoProblems(record: ModelRecord): string[] {
  const problems: string[] = [];
  const resolutions = listOf(record.allowedParams.resolution).map(String);
  const byResolution = record.pricing.perSecondByResolution ?? {};
  for (const key of Object.keys(byResolution)) {
    if (!resolutions.includes(key)) problems.push(`pricing.perSecondByResolution['${key}'] names an unsupported resolution`);
  }
  for (const resolution of resolutions) {
    if (byResolution[resolution] === undefined && record.pricing.perSecond === undefined) problems.push(`no price for resolution '${resolution}'`);
  }
  const takesImage = Boolean(record.allowedParams.image_url || record.allowedParams.image_base64);
  if (Boolean(record.capabilities.imageToVideo) !== takesImage) problems.push('capabilities.imageToVideo disagrees with image_url/image_base64');
  return problems;
}

function listOf(rule: ParamRule | undefined): Array<string | number> {
  if (!rule) return [];
  return Array.isArray(rule) ? rule : rule.values ?? [];
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
