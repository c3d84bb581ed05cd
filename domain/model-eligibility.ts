/**
 * The one rule for "may this request use this model": it exists in the catalog, serves the endpoint's
 * modality, and the key may use it. The API checks the requested model before starting a run; every hop of
 * a run (fallbacks included) checks again, since chains and keys can change while it waits.
 */
import type { Modality, ModelRecord } from '../catalog/types';
import { InvalidRequestError, NotFoundError, PermissionDeniedError } from '../core/errors';
import type { ModelCatalog } from './model-catalog';

export interface ModelUse {
  model: string;
  /** The modality the endpoint serves. */
  modality: Modality;
  /** The key's allow-list; null when it may use every model. */
  allowedModels: string[] | null;
}

export async function eligibleModel(catalog: Pick<ModelCatalog, 'get'>, use: ModelUse): Promise<ModelRecord> {
  const record = await catalog.get(use.model);
  if (!record) throw new NotFoundError(`The model '${use.model}' does not exist.`, { code: 'model_not_found', param: 'model' });
  if (record.modality !== use.modality) {
    throw new InvalidRequestError(`Model '${use.model}' is a ${record.modality} model; this endpoint needs a ${use.modality} model.`, { code: 'model_modality_mismatch', param: 'model' });
  }
  if (use.allowedModels && !use.allowedModels.includes(use.model) && !use.allowedModels.includes(record.slug)) {
    throw new PermissionDeniedError(`This API key may not use model '${use.model}'. Allowed: ${use.allowedModels.join(', ')}.`, { code: 'model_not_allowed', param: 'model' });
  }
  return record;
}
