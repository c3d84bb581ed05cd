import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useCan } from '../../session';
import { credits, Empty, ErrorNote, Field, Loading, Section, Table, when } from '../../ui';
import { UsageCharts } from './UsageCharts';
import { StorageCard } from './Storage';

export function Billing() {
  const can = useCan();
  return (
    <>
      <BalanceCard />
      {can('billing.manage') && <TopUp />}
      {can('usage.read') && <UsageCharts />}
      <StorageCard />
      <Ledger />
    </>
  );
}

function BalanceCard() {
  const balance = useQuery({ queryKey: ['balance'], queryFn: api.balance });
  const b = balance.data;
  return (
    <Section title="Plan and balance">
      {balance.isPending && <Loading what="the balance" />}
      <ErrorNote error={balance.error} />
      {b && (
        <dl className="stats">
          <div><dt>Plan</dt><dd>{b.plan ? `${b.plan.name} (${credits(b.plan.monthly_credits)} credits a month)` : 'none'}</dd></div>
          <div><dt>Balance</dt><dd data-testid="balance">{credits(b.balance)}</dd></div>
          <div><dt>Plan credits</dt><dd>{credits(b.plan_credits)}</dd></div>
          <div><dt>Topups</dt><dd>{credits(b.topup_credits)}</dd></div>
          <div><dt>Spent in {b.cycle}</dt><dd data-testid="spent">{credits(b.spent_this_cycle)}</dd></div>
        </dl>
      )}
    </Section>
  );
}

function TopUp() {
  const client = useQueryClient();
  const topUp = useMutation({ mutationFn: api.topUp, onSuccess: () => client.invalidateQueries({ queryKey: ['balance'] }).then(() => client.invalidateQueries({ queryKey: ['ledger'] })) });
  return (
    <Section title="Top up">
      <form className="inline" onSubmit={(e) => { e.preventDefault(); topUp.mutate(Number(new FormData(e.currentTarget).get('credits'))); e.currentTarget.reset(); }}>
        <Field label="Credits" name="credits" type="number" min={1} step="any" required />
        <button type="submit" disabled={topUp.isPending}>Add credits</button>
      </form>
      <ErrorNote error={topUp.error} />
      {topUp.isSuccess && <p role="status" className="ok">Credits added; topups never expire.</p>}
    </Section>
  );
}

function Ledger() {
  const ledger = useQuery({ queryKey: ['ledger'], queryFn: api.ledger });
  return (
    <Section title="Ledger">
      {ledger.isPending && <Loading what="the ledger" />}
      <ErrorNote error={ledger.error} />
      {ledger.data?.data.length === 0 && <Empty>No credit movements yet.</Empty>}
      {!!ledger.data?.data.length && (
        <Table caption="Latest credit movements" head={['When', 'Kind', 'Credits', 'Source', 'Model', 'Key']}>
          {ledger.data.data.map((l) => (
            <tr key={l.id}>
              <td>{when(l.created_at)}</td><td>{l.kind}</td><td className={l.credits < 0 ? 'neg' : 'pos'}>{credits(l.credits)}</td>
              <td>{l.source ?? '—'}</td><td>{l.model ?? '—'}</td><td>{l.api_key_id ?? '—'}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
