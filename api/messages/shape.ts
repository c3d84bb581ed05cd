/**
 * What makes a request Anthropic's (the Messages routes, or `anthropic-version` on the model routes), and
 * the catalog's chat models as Anthropic's ModelInfo objects (`GET /v1/models` pages by `after_id`,
 * `before_id` and `limit`, as Anthropic's do).
 */
import type Koa from 'koa';
import type { ModelRecord } from '../../catalog/types';
import { InvalidRequestError } from '../../core/errors';

const MESSAGES_PATH = /^\/v1\/messages(\/|$)/;
const MODELS_PATH = /^\/v1\/models(\/|$)/;

/** Whether this request's answers (and errors) are in Anthropic's shape. */
export function speaksAnthropic(ctx: Koa.Context): boolean {
  return MESSAGES_PATH.test(ctx.path) || (MODELS_PATH.test(ctx.path) && ctx.get('anthropic-version') !== '');
}

export function anthropicModelInfo(record: ModelRecord) {
  return {
    type: 'model',
    id: record.slug,
    display_name: record.name,
    created_at: new Date(record.created * 1000).toISOString(),
    capabilities: null,
    max_input_tokens: record.contextWindow ?? null,
    max_tokens: record.maxOutputTokens ?? null,
  };
}

type Query = Record<string, string | string[] | undefined>;

export function anthropicModelList(records: ModelRecord[], query: Query) {
  for (const name of Object.keys(query)) {
    if (!['limit', 'after_id', 'before_id'].includes(name) || Array.isArray(query[name])) {
      throw new InvalidRequestError(`${name}: Unknown or repeated query parameter.`, { param: name, code: 'unknown_parameter' });
    }
  }
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new InvalidRequestError('limit: expected an integer from 1 to 1000.', { param: 'limit', code: 'invalid_value' });
  const at = (id: unknown, param: string) => {
    if (id === undefined) return null;
    const index = records.findIndex((r) => r.slug === id);
    if (index < 0) throw new InvalidRequestError(`${param}: no model '${String(id)}' to page from.`, { param, code: 'invalid_value' });
    return index;
  };
  const after = at(query.after_id, 'after_id');
  const before = at(query.before_id, 'before_id');
  let page = records.slice(after === null ? 0 : after + 1, before === null ? records.length : before);
  const more = page.length > limit;
  page = before !== null ? page.slice(-limit) : page.slice(0, limit);
  const data = page.map(anthropicModelInfo);
  return { data, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null, has_more: more };
}
