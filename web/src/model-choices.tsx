/**
 * The models a picker offers: those this workspace can use (GET /v1/models says which, by the rule requests
 * are checked with), and a line naming how many more there are and where they would be unlocked.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from './api';
import { Link } from './router';
import type { Model } from './types';

export function useModelChoices(modality?: string) {
  const models = useQuery({ queryKey: ['models'], queryFn: api.models });
  const all = (models.data?.data ?? []).filter((m) => !modality || m.modality === modality);
  return { query: models, usable: all.filter((m) => m.available), others: all.filter((m) => !m.available) };
}

/** "N more models need a provider key" under a picker, linking to where that changes (nothing when none). */
export function MoreModels({ others, id }: { others: Model[]; id?: string }) {
  if (others.length === 0) return null;
  const byKey = others.filter((m) => m.needs_provider_key).length;
  const providers = [...new Set(others.filter((m) => m.needs_provider_key).map((m) => m.provider))].sort();
  return (
    <p className="muted more-models" id={id} data-testid="more-models">
      {others.length} more model{others.length === 1 ? '' : 's'} {others.length === 1 ? 'is' : 'are'} not available to this workspace
      {byKey > 0 && <>: {byKey} need{byKey === 1 ? 's' : ''} a provider key ({providers.join(', ')}), added in <Link to="/settings/provider-keys">Provider keys</Link></>}
      {byKey < others.length && (byKey > 0 ? '; the rest have no credentials on this gateway' : ': their providers have no credentials on this gateway')}
      . <Link to="/settings/models">See every model</Link>.
    </p>
  );
}
