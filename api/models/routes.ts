/**
 * `GET /v1/models[?modality=]` and `GET /v1/models/{slug}`: OpenAI model objects (`id`, `object`, `created`,
 * `owned_by`) extended with the catalog's provider, modality, capabilities, pricing and allowedParams, and
 * whether the caller can use the model (`available`; else `unavailable_code`, the code its request would be
 * refused with, `unavailable_reason` and `needs_provider_key`), by the rule requests are checked with
 * (domain/model-eligibility.ts). A request carrying `anthropic-version` (Anthropic's clients) gets the chat
 * models in Anthropic's shape.
 */
import Router from '@koa/router';
import { MODALITIES, type Modality, type ModelRecord } from '../../catalog/types';
import { InvalidRequestError, NotFoundError } from '../../core/errors';
import { unusableBecause, usableModels, type Unusable } from '../../domain/model-eligibility';
import { modelAccessOf } from '../http/model-access';
import type { AppDeps, GatewayState } from '../http/context';
import { requirePermission } from '../http/permissions';
import { anthropicModelInfo, anthropicModelList, speaksAnthropic } from '../messages/shape';

export function modelsRouter(deps: AppDeps): Router<GatewayState> {
  const router = new Router<GatewayState>();

  router.get('/models', requirePermission('models.read'), async (ctx) => {
    if (speaksAnthropic(ctx)) {
      ctx.body = anthropicModelList(await deps.catalog.list('chat'), ctx.query);
      return;
    }
    const modality = ctx.query.modality;
    if (modality !== undefined && (typeof modality !== 'string' || !(MODALITIES as readonly string[]).includes(modality))) {
      throw new InvalidRequestError(`Invalid 'modality': expected one of ${MODALITIES.join(', ')}.`, { param: 'modality' });
    }
    const models = await usableModels(deps.catalog, modelAccessOf(deps, ctx.state.auth), modality as Modality | undefined);
    ctx.body = { object: 'list', data: models.map((m) => toModelObject(m.record, m.unusable)) };
  });

  router.get('/models/:slug', requirePermission('models.read'), async (ctx) => {
    const record = await deps.catalog.get(ctx.params.slug);
    if (!record) throw new NotFoundError(`The model '${ctx.params.slug}' does not exist.`, { code: 'model_not_found', param: 'model' });
    if (speaksAnthropic(ctx) && record.modality === 'chat') {
      ctx.body = anthropicModelInfo(record);
      return;
    }
    ctx.body = toModelObject(record, await unusableBecause(record, modelAccessOf(deps, ctx.state.auth)));
  });

  return router;
}

/** `unusable`: why the caller cannot use the model (null: it can). */
export function toModelObject(record: ModelRecord, unusable: Unusable | null) {
  return {
    id: record.slug,
    object: 'model' as const,
    created: record.created,
    owned_by: record.ownedBy,
    name: record.name,
    provider: record.provider,
    modality: record.modality,
    family: record.family ?? null,
    available: !unusable,
    ...(unusable ? { unavailable_code: unusable.code, unavailable_reason: unusable.message, needs_provider_key: unusable.needsProviderKey } : {}),
    capabilities: record.capabilities,
    context_window: record.contextWindow ?? null,
    max_output_tokens: record.maxOutputTokens ?? null,
    ...(record.dimensions ? { dimensions: record.dimensions } : {}),
    pricing: { unit: 'credits', ...record.pricing },
    allowedParams: record.allowedParams,
    ...(record.ignoredParams ? { ignoredParams: record.ignoredParams } : {}),
    defaults: record.defaults ?? {},
    deprecated: record.deprecated ?? false,
  };
}
