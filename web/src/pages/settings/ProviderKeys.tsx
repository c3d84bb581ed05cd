/**
 * The workspace's own provider keys (BYOK), for owners and admins: add one (the gateway tests it with the
 * provider before saving it), see which providers have one (last four characters only), remove one.
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { ConfirmButton } from '../../confirm';
import { Empty, ErrorNote, Field, Loading, Section, Select, Table, when } from '../../ui';

export function ProviderKeys() {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ['provider-keys'], queryFn: api.providerKeys });
  // A key added or removed changes which models this workspace can use.
  const refresh = () => Promise.all([client.invalidateQueries({ queryKey: ['provider-keys'] }), client.invalidateQueries({ queryKey: ['models'] })]);
  const [added, setAdded] = useState<{ provider: string; key: string } | null>(null);
  const add = useMutation({ mutationFn: api.addProviderKey, onSuccess: (k) => { setAdded({ provider: k.provider, key: k.key }); return refresh(); } });
  const remove = useMutation({ mutationFn: api.removeProviderKey, onSuccess: refresh });
  const [provider, setProvider] = useState('');
  const fee = keys.data?.fee_percent ?? 0;
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const key = String(new FormData(form).get('key') ?? '').trim();
    setAdded(null);
    add.mutate({ provider, key }, { onSuccess: () => form.reset() });
  };
  return (
    <>
      <Section title="Add a provider key">
        <p className="muted">
          Requests of this workspace for a provider&apos;s models then go through your own key with that provider, and are
          charged {fee === 0 ? 'no credits' : `${fee}% of the model's price`} here instead of the model&apos;s price. The key is
          tested with a one-token call before it is saved; after that only its last four characters are shown.
        </p>
        {keys.isPending && <Loading what="providers" />}
        <form className="grid" onSubmit={submit} aria-label="Add a provider key">
          <Select label="Provider" value={provider} onChange={(e) => setProvider(e.target.value)} required
            options={[{ value: '', label: 'Choose…' }, ...(keys.data?.providers ?? []).map((p) => ({ value: p, label: p }))]} />
          <Field label="API key" name="key" type="password" autoComplete="off" required minLength={8} maxLength={512} spellCheck={false} />
          <button type="submit" disabled={!provider || add.isPending}>{add.isPending ? 'Testing the key…' : 'Test and save key'}</button>
        </form>
        <ErrorNote error={add.error} />
        {added && (
          <p role="status">
            Saved your {added.provider} key ending in <code>{added.key.slice(-4)}</code>: it worked with {added.provider}. It is not shown again.
          </p>
        )}
      </Section>
      <Section title="Provider keys">
        <ErrorNote error={keys.error ?? remove.error} />
        {keys.data?.data.length === 0 && <Empty>No keys of your own: every request uses the gateway&apos;s keys, at the models&apos; prices.</Empty>}
        {!!keys.data?.data.length && (
          <Table caption="Provider keys of this workspace" head={['Provider', 'Key', 'Added', '']}>
            {keys.data.data.map((k) => (
              <tr key={k.id}>
                <td>{k.provider}</td>
                <td><code aria-label={`ending in ${k.last_four}`}>…{k.last_four}</code></td>
                <td>{when(k.created_at)}</td>
                <td className="actions">
                  <ConfirmButton className="danger" aria-label={`Remove the ${k.provider} key`} onConfirm={() => remove.mutateAsync(k.provider)}
                    confirm={{ title: `Remove your ${k.provider} key?`, confirmLabel: 'Remove key', children: (
                      <p>Requests for {k.provider}&apos;s models go back to the gateway&apos;s own key at the models&apos; prices, or fail if the gateway has none.</p>
                    ) }}>Remove</ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
