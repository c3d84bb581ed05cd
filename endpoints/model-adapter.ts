/** The provider adapter serving a catalog model; a provider without one for the modality cannot serve it (503). */
import type { ModelRecord } from '../catalog/types';
import { UpstreamError } from '../core/errors';
import type { ProviderRegistry } from '../providers/registry';
import type { Provider } from '../providers/types';

export type AdapterModality = 'chat' | 'embedding' | 'image' | 'speech' | 'transcription' | 'video' | 'music' | 'moderation';
export type AdapterOf<M extends AdapterModality> = ReturnType<NonNullable<Provider[M]>>;

export function modelAdapter<M extends AdapterModality>(providers: Pick<ProviderRegistry, 'get'>, record: ModelRecord, modality: M): AdapterOf<M> {
  const provider = providers.get(record.provider);
  const bind = provider[modality] as ((upstreamModel: string) => AdapterOf<M>) | undefined;
  if (!bind) {
    throw new UpstreamError(`Provider '${record.provider}' has no ${modality} adapter on this gateway, so '${record.slug}' cannot be served.`, { kind: 'not_configured', provider: record.provider });
  }
  return bind.call(provider, record.upstreamId);
}
