/**
 * Models of one modality this workspace can use (the gateway's or the workspace's own provider key serves
 * them), grouped by provider, with readable prices and how many more there are; and the model's parameters.
 */
import { useId } from 'react';
import { MoreModels, useModelChoices } from '../../model-choices';
import { priceText } from '../../prices';
import type { Model } from '../../types';

export function useModels(modality: string) {
  return useModelChoices(modality).usable;
}

const price = (m: Model) => priceText(m.pricing);

/** `showMore`: whether the line naming the models left out is shown (once is enough where pickers repeat). */
export function ModelPicker({ label, modality, value, onChange, showMore = true }: { label: string; modality: string; value: string; onChange: (id: string) => void; showMore?: boolean }) {
  const { usable: models, others } = useModelChoices(modality);
  const providers = [...new Set(models.map((m) => m.provider))].sort();
  const more = useId();
  return (
    <div className="picker">
      <label className="field">
        <span>{label}</span>
        <select value={value} onChange={(e) => onChange(e.target.value)} aria-describedby={showMore && others.length ? more : undefined}>
          {!models.some((m) => m.id === value) && <option value={value}>{value}{others.some((m) => m.id === value) ? ' (not available here)' : ''}</option>}
          {providers.map((p) => (
            <optgroup key={p} label={p}>
              {models.filter((m) => m.provider === p).map((m) => <option key={m.id} value={m.id}>{m.id} — {price(m)}</option>)}
            </optgroup>
          ))}
        </select>
      </label>
      {showMore && <MoreModels others={others} id={more} />}
    </div>
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
