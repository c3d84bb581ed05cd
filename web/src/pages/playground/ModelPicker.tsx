/**
 * Models of one modality this workspace can use (their provider configured on this gateway), grouped by
 * provider, with readable prices; and the model's parameters.
 */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { priceText } from '../../prices';
import type { Model } from '../../types';

export function useModels(modality: string) {
  const models = useQuery({ queryKey: ['models'], queryFn: api.models });
  return (models.data?.data ?? []).filter((m) => m.modality === modality && m.available);
}

const price = (m: Model) => priceText(m.pricing);

export function ModelPicker({ label, modality, value, onChange }: { label: string; modality: string; value: string; onChange: (id: string) => void }) {
  const models = useModels(modality);
  const providers = [...new Set(models.map((m) => m.provider))].sort();
  return (
    <label className="field">
      <span>{label}</span>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        {!models.some((m) => m.id === value) && <option value={value}>{value}</option>}
        {providers.map((p) => (
          <optgroup key={p} label={p}>
            {models.filter((m) => m.provider === p).map((m) => <option key={m.id} value={m.id}>{m.id} — {price(m)}</option>)}
          </optgroup>
        ))}
      </select>
    </label>
  );
}

/** The numeric parameters a chat model allows (from its allowedParams), plus JSON mode when it takes response_format. */
const NUMERIC = ['temperature', 'top_p', 'max_tokens', 'seed', 'presence_penalty', 'frequency_penalty'];

export function ParamsPanel({ model, params, onChange }: { model: string; params: Record<string, unknown>; onChange: (p: Record<string, unknown>) => void }) {
  const record = useModels('chat').find((m) => m.id === model);
  const allowed = Object.keys(record?.allowedParams ?? {});
  const set = (name: string, value: unknown) => {
    const next = { ...params };
    if (value === '' || value === undefined) delete next[name];
    else next[name] = value;
    onChange(next);
  };
  return (
    <fieldset className="params">
      <legend>Parameters</legend>
      {NUMERIC.filter((n) => allowed.includes(n)).map((n) => (
        <label key={n} className="field"><span>{n}</span>
          <input type="number" step="any" value={String(params[n] ?? '')} onChange={(e) => set(n, e.target.value === '' ? '' : Number(e.target.value))} />
        </label>
      ))}
      {allowed.includes('response_format') && (
        <label className="check"><input type="checkbox" checked={Boolean(params.response_format)} onChange={(e) => set('response_format', e.target.checked ? { type: 'json_object' } : undefined)} /> JSON mode</label>
      )}
    </fieldset>
  );
}
