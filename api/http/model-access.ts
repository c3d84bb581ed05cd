/** The caller's access to models (domain/model-eligibility.ts) as this gateway's deps and the request's auth give it. */
import { workspaceModelAccess, type ModelAccess } from '../../domain/model-eligibility';
import type { AuthContext } from './auth';
import type { AppDeps } from './context';

export function modelAccessOf(deps: AppDeps, auth: AuthContext): ModelAccess {
  return workspaceModelAccess(deps.db, {
    workspaceId: auth.workspaceId,
    allowedModels: auth.allowedModels,
    platformServes: (record) => deps.isProviderConfigured(record.provider, record.slug),
    providerKeys: deps.providerKeys,
  });
}
