import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import type { CreatedKey } from '../../types';
import { ConfirmButton } from '../../confirm';
import { MoreModels, useModelChoices } from '../../model-choices';
import { credits, Empty, ErrorNote, Field, Loading, Section, Select, Table, when } from '../../ui';

export function Keys() {
  const [created, setCreated] = useState<CreatedKey | null>(null);
  return (
    <>
      <CreateKey onCreated={setCreated} />
      {created && <ShownOnce created={created} onDone={() => setCreated(null)} />}
      <KeyList />
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const client = useQueryClient();
  const presets = useQuery({ queryKey: ['presets'], queryFn: api.presets });
  const [preset, setPreset] = useState('custom');
  const create = useMutation({ mutationFn: api.createKey, onSuccess: (key) => { onCreated(key); return client.invalidateQueries({ queryKey: ['keys'] }); } });
  const chosen = presets.data?.data.find((p) => p.id === preset);
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const num = (name: string) => (f.get(name) ? Number(f.get(name)) : undefined);
    const models = f.getAll('models').map(String);
    create.mutate({ name: String(f.get('name')), preset, rpm: num('rpm'), daily_tokens: num('daily_tokens'), cost_cap: num('cost_cap'), models: models.length ? models : undefined });
    e.currentTarget.reset();
  };
  return (
    <Section title="Create an API key">
      {presets.isPending && <Loading what="presets" />}
      <ErrorNote error={presets.error ?? create.error} />
      <form className="grid" onSubmit={submit} aria-label="Create an API key">
        <Field label="Name" name="name" required maxLength={100} placeholder="e.g. production" />
        <Select label="Quota preset" name="preset" value={preset} onChange={(e) => setPreset(e.target.value)}
          options={(presets.data?.data ?? []).map((p) => ({ value: p.id, label: p.name }))} />
        <Field label="Requests per minute" name="rpm" type="number" min={1} placeholder={chosen?.rpm ? String(chosen.rpm) : 'unlimited'} />
        <Field label="Daily tokens" name="daily_tokens" type="number" min={1} placeholder={chosen?.daily_tokens ? String(chosen.daily_tokens) : 'unlimited'} />
        <AllowedModels />
        <Field label="Cost cap (credits)" name="cost_cap" type="number" min={0.000001} step="any" placeholder="none" />
        <button type="submit" disabled={create.isPending}>Create key</button>
      </form>
    </Section>
  );
}

/** The key's allow-list: the models this workspace can use, to check (none checked: every model). */
function AllowedModels() {
  const { usable, others } = useModelChoices();
  return (
    <details className="allow-list">
      <summary>Allowed models: all, unless some are checked</summary>
      <fieldset>
        <legend className="sr-only">Allowed models</legend>
        {usable.map((m) => (
          <label key={m.id} className="check"><input type="checkbox" name="models" value={m.id} /> {m.id} <span className="muted">({m.provider}, {m.modality})</span></label>
        ))}
      </fieldset>
      <MoreModels others={others} />
    </details>
  );
}

function ShownOnce({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  return (
    <Section title="Your new key">
      <p role="status">Copy it now: <strong>it is shown only once</strong>.</p>
      <code className="secret" data-testid="new-key" tabIndex={0}>{created.value}</code>
      <div className="row">
        <button type="button" onClick={() => navigator.clipboard?.writeText(created.value)}>Copy</button>
        <button type="button" className="secondary" onClick={onDone}>Done</button>
      </div>
    </Section>
  );
}

function KeyList() {
  const client = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: api.keys });
  const revoke = useMutation({ mutationFn: api.revokeKey, onSuccess: () => client.invalidateQueries({ queryKey: ['keys'] }) });
  return (
    <Section title="API keys">
      {keys.isPending && <Loading what="keys" />}
      <ErrorNote error={keys.error} />
      {keys.data?.data.length === 0 && <Empty>No keys yet. Create one above.</Empty>}
      {!!keys.data?.data.length && (
        <Table caption="Keys of this workspace" head={['Name', 'Key', 'Owner', 'Preset', 'Last used', 'Requests', 'Credits', '']}>
          {keys.data.data.map((k) => (
            <tr key={k.id} className={k.revoked_at ? 'revoked' : undefined}>
              <td>{k.name}</td>
              <td><code>{k.redacted_value}</code></td>
              <td>{k.owner.user?.email ?? 'operator'}</td>
              <td>{k.preset ?? '—'}</td>
              <td>{when(k.last_used_at)}</td>
              <td>{k.usage.requests}</td>
              <td>{credits(k.usage.credits)}</td>
              <td className="actions">
                {k.revoked_at ? <span className="badge revoked">revoked</span>
                  : (
                    <ConfirmButton className="danger" aria-label={`Revoke ${k.name}`} onConfirm={() => revoke.mutateAsync(k.id)}
                      confirm={{ title: `Revoke the key “${k.name}”?`, confirmLabel: 'Revoke key', children: (
                        <p>Every request made with {k.redacted_value} is refused from now on. This cannot be undone: a new key means a new secret.</p>
                      ) }}>Revoke</ConfirmButton>
                  )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
