import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import type { BudgetAlert } from '../../types';
import { ConfirmButton } from '../../confirm';
import { Empty, ErrorNote, Field, Loading, Section, Select, Table } from '../../ui';

const describe = (a: BudgetAlert) => (a.threshold_type === 'percent' ? `${a.threshold}% of plan credits` : `${a.threshold} credits`);

export function BudgetAlerts() {
  const client = useQueryClient();
  const alerts = useQuery({ queryKey: ['alerts'], queryFn: api.budgetAlerts });
  const refresh = () => client.invalidateQueries({ queryKey: ['alerts'] });
  const create = useMutation({ mutationFn: api.createBudgetAlert, onSuccess: refresh });
  const remove = useMutation({ mutationFn: api.deleteBudgetAlert, onSuccess: refresh });
  const [type, setType] = useState('percent');
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const email = String(f.get('email') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const webhook = String(f.get('webhook') ?? '').trim();
    create.mutate({
      threshold_type: type, threshold: Number(f.get('threshold')),
      channels: { ...(email.length ? { email: { to: email } } : {}), ...(webhook ? { webhook: { url: webhook } } : {}) },
    });
  };
  return (
    <>
      <Section title="New budget alert">
        <form className="grid" onSubmit={submit} aria-label="New budget alert">
          <Select label="Threshold type" value={type} onChange={(e) => setType(e.target.value)} options={[{ value: 'percent', label: '% of plan credits' }, { value: 'credits', label: 'Credits spent' }]} />
          <Field label="Threshold" name="threshold" type="number" min={1} step="any" required />
          <Field label="E-mail recipients" name="email" placeholder="ops@example.com, …" />
          <Field label="Chat webhook URL" name="webhook" type="url" placeholder="https://hooks.slack.com/…" />
          <button type="submit" disabled={create.isPending}>Add alert</button>
        </form>
        <ErrorNote error={create.error} />
      </Section>
      <Section title="Budget alerts">
        {alerts.isPending && <Loading what="alerts" />}
        <ErrorNote error={alerts.error} />
        {alerts.data?.data.length === 0 && <Empty>No alerts: you will not be told when spend grows.</Empty>}
        {!!alerts.data?.data.length && (
          <Table caption="Alerts of this workspace" head={['Threshold', 'E-mail', 'Webhook', '']}>
            {alerts.data.data.map((a) => (
              <tr key={a.id}>
                <td>{describe(a)}</td>
                <td>{a.channels.email?.to.join(', ') ?? '—'}</td>
                <td>{a.channels.webhook?.url ?? '—'}</td>
                <td className="actions">
                  <ConfirmButton className="danger" aria-label={`Delete the alert at ${describe(a)}`} onConfirm={() => remove.mutateAsync(a.id)}
                    confirm={{ title: 'Delete this budget alert?', confirmLabel: 'Delete alert', children: <p>Nobody will be told when spend reaches {describe(a)}.</p> }}>
                    Delete
                  </ConfirmButton>
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
