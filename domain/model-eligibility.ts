/**
 * The one rule for "may this caller use this model": it exists in the catalog, serves the endpoint's
 * modality, the key may use it (its allow-list), and someone's credentials serve its provider (the gateway's
 * own, its deployments, or the workspace's own provider key). The API checks the requested model before
 * starting a run; every hop of a run (fallbacks included) checks again, since chains and keys can change
 * while it waits. The same rule sorts the model list (`GET /v1/models`, the app's pickers) into the models
 * the caller can use and the rest, each with why not.
 *
 * Plans do not limit models: every plan may use every model its workspace's keys can reach.
 */
import type { Knex } from 'knex';
import type { Modality, ModelRecord } from '../catalog/types';
import { InvalidRequestError, NotFoundError, PermissionDeniedError, UpstreamError } from '../core/errors';
import type { ModelCatalog } from './model-catalog';
import type { WorkspaceProviderKeys } from './provider-keys';

export interface ModelUse {
  model: string;
  /** The modality the endpoint serves. */
  modality: Modality;
  /** The key's allow-list; null when it may use every model. */
  allowedModels: string[] | null;
}

/** Whether a key's allow-list admits the model (by the name asked for, or by its slug). */
function keyMayUse(allowedModels: string[] | null, record: ModelRecord, asked = record.slug): boolean {
  return !allowedModels || allowedModels.includes(asked) || allowedModels.includes(record.slug);
}

export async function eligibleModel(catalog: Pick<ModelCatalog, 'get'>, use: ModelUse): Promise<ModelRecord> {
  const record = await catalog.get(use.model);
  if (!record) throw new NotFoundError(`The model '${use.model}' does not exist.`, { code: 'model_not_found', param: 'model' });
  if (record.modality !== use.modality) {
    throw new InvalidRequestError(`Model '${use.model}' is a ${record.modality} model; this endpoint needs a ${use.modality} model.`, { code: 'model_modality_mismatch', param: 'model' });
  }
  const why = keyRefusal(record, use.allowedModels, use.model);
  if (why) throw new PermissionDeniedError(why.message, { code: why.code, param: 'model' });
  return record;
}

/** Who asks: the key's allow-list, and which credentials can serve the workspace's models. */
export interface ModelAccess {
  /** The key's allow-list; null for a key without one, and for a signed-in person. */
  allowedModels: string[] | null;
  /** Whether the gateway's own credentials (or deployments of the model) serve it. */
  platformServes: (record: ModelRecord) => boolean;
  /** Providers the workspace may bring a key of its own for (none while workspace keys are off). */
  ownKeyPossible: (provider: string) => boolean;
  /** Providers the workspace brought a key of its own for (read once, when first needed). */
  ownKeys: () => Promise<ReadonlySet<string>>;
}

/** Why the caller cannot use a model: the code its request would be refused with, and a sentence for people. */
export interface Unusable {
  code: 'model_not_allowed' | 'provider_not_configured';
  message: string;
  /** Whether a provider key of the workspace's own would make it usable. */
  needsProviderKey: boolean;
}

function keyRefusal(record: ModelRecord, allowedModels: string[] | null, asked = record.slug): Unusable | null {
  if (keyMayUse(allowedModels, record, asked)) return null;
  return { code: 'model_not_allowed', message: `This API key may not use model '${asked}'. Allowed: ${allowedModels!.join(', ')}.`, needsProviderKey: false };
}

/** Why the caller cannot use `record` (null: it can); `asked`: the name the request used. */
export async function unusableBecause(record: ModelRecord, access: ModelAccess, asked = record.slug): Promise<Unusable | null> {
  const refused = keyRefusal(record, access.allowedModels, asked);
  if (refused) return refused;
  if (access.platformServes(record) || (await access.ownKeys()).has(record.provider)) return null;
  const byok = access.ownKeyPossible(record.provider);
  return {
    code: 'provider_not_configured',
    message: byok
      ? `Model '${asked}' is served by ${record.provider}, which has no key on this gateway: add this workspace's own ${record.provider} key (Settings > Provider keys) to use it.`
      : `Model '${asked}' is served by ${record.provider}, which has no credentials configured on this gateway.`,
    needsProviderKey: byok,
  };
}

/** Throws the refusal a request for an unusable model gets (403 `model_not_allowed`, 503 `provider_not_configured`). */
export async function checkUsable(record: ModelRecord, access: ModelAccess, asked = record.slug): Promise<void> {
  const why = await unusableBecause(record, access, asked);
  if (!why) return;
  if (why.code === 'model_not_allowed') throw new PermissionDeniedError(why.message, { code: why.code, param: 'model' });
  throw new UpstreamError(why.message, { kind: 'not_configured', provider: record.provider, param: 'model' });
}

/** The catalog's models (of one modality) split into those the caller can use and the rest, with why not. */
export async function usableModels(catalog: Pick<ModelCatalog, 'list'>, access: ModelAccess, modality?: Modality): Promise<Array<{ record: ModelRecord; unusable: Unusable | null }>> {
  const records = await catalog.list(modality);
  return Promise.all(records.map(async (record) => ({ record, unusable: await unusableBecause(record, access) })));
}

/**
 * A workspace's access to models: `platformServes` says what the gateway's own credentials serve, and
 * `providerKeys` (absent while workspace keys are off) which providers take a key of the workspace's own;
 * the keys it brought are read from the database once, when first needed.
 */
export function workspaceModelAccess(db: Knex, opts: {
  workspaceId: string;
  allowedModels: string[] | null;
  platformServes: (record: ModelRecord) => boolean;
  providerKeys: Pick<WorkspaceProviderKeys, 'platform'> | null | undefined;
}): ModelAccess {
  const { providerKeys } = opts;
  let own: Promise<ReadonlySet<string>> | null = null;
  return {
    allowedModels: opts.allowedModels,
    platformServes: opts.platformServes,
    ownKeyPossible: (provider) => Boolean(providerKeys?.platform.takesOwnKey(provider)),
    ownKeys: () => {
      if (!providerKeys) return Promise.resolve(new Set<string>());
      own ??= db('workspace_provider_keys').where({ workspace_id: opts.workspaceId }).pluck('provider').then((rows: string[]) => new Set(rows));
      return own;
    },
  };
}
