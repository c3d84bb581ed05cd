import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useCan } from '../../session';
import { ConfirmButton } from '../../confirm';
import { MoreModels, useModelChoices } from '../../model-choices';
import { Empty, ErrorNote, Loading, Section, Select, Table } from '../../ui';

/** Per source model, the ordered backups tried when it errors or is throttled. */
export function FallbackChains() {
  const can = useCan();
  const client = useQueryClient();
  const chains = useQuery({ queryKey: ['chains'], queryFn: api.fallbackChains });
  // Only models this workspace can use: a chain through a model no key serves would fail there.
  const { query: models, usable, others } = useModelChoices();
  const refresh = () => client.invalidateQueries({ queryKey: ['chains'] });
  const save = useMutation({ mutationFn: (v: { model: string; chain: string[] }) => api.setFallbackChain(v.model, v.chain), onSuccess: refresh });
  const remove = useMutation({ mutationFn: api.deleteFallbackChain, onSuccess: refresh });
  const [source, setSource] = useState('');
  const sameModality = usable.filter((m) => m.id !== source && m.modality === usable.find((s) => s.id === source)?.modality);
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    save.mutate({ model: source, chain: ['fallback1', 'fallback2', 'fallback3'].map((n) => String(f.get(n) ?? '')).filter(Boolean) });
  };
  const options = (list: typeof sameModality, none: string) => [{ value: '', label: none }, ...list.map((m) => ({ value: m.id, label: `${m.id} (${m.provider})` }))];
  return (
    <>
      {can('workspace.manage') && (
        <Section title="Set a chain">
          {models.isPending && <Loading what="models" />}
          <form className="grid" onSubmit={submit} aria-label="Set a fallback chain">
            <Select label="Source model" value={source} onChange={(e) => setSource(e.target.value)} options={options(usable, 'Choose…')} required />
            {['fallback1', 'fallback2', 'fallback3'].map((n, i) => <Select key={n} label={`Fallback ${i + 1}`} name={n} options={options(sameModality, '—')} disabled={!source} />)}
            <button type="submit" disabled={!source || save.isPending}>Save chain</button>
          </form>
          <MoreModels others={others} />
          <ErrorNote error={save.error ?? models.error} />
        </Section>
      )}
      <Section title="Fallback chains">
        {chains.isPending && <Loading what="chains" />}
        <ErrorNote error={chains.error} />
        {chains.data?.data.length === 0 && <Empty>No fallback chains: a failing model fails the request.</Empty>}
        {!!chains.data?.data.length && (
          <Table caption="Chains of this workspace" head={['Model', 'Then', '']}>
            {chains.data.data.map((c) => (
              <tr key={c.model}>
                <td><code>{c.model}</code></td><td>{c.chain.join(' → ')}</td>
                <td className="actions">
                  {can('workspace.manage') && (
                    <ConfirmButton className="danger" aria-label={`Remove the chain of ${c.model}`} onConfirm={() => remove.mutateAsync(c.model)}
                      confirm={{ title: `Remove the fallback chain of ${c.model}?`, confirmLabel: 'Remove chain', children: (
                        <p>When {c.model} fails or is throttled, its requests fail instead of trying {c.chain.join(', ')}.</p>
                      ) }}>Remove</ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
