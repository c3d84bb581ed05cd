import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useCan } from '../../session';
import { credits, Empty, ErrorNote, Field, Loading, Section, Table, when } from '../../ui';
import type { LedgerEntry, Payment, TopupTerms } from '../../types';
import { UsageCharts } from './UsageCharts';
import { StorageCard } from './Storage';

export function Billing() {
  const can = useCan();
  const balance = useQuery({ queryKey: ['balance'], queryFn: api.balance });
  const terms = balance.data?.topups;
  return (
    <>
      <BalanceCard />
      {terms && (terms.enabled ? can('billing.manage') && <BuyCredits terms={terms} /> : <OperatorsAddCredits />)}
      {terms?.enabled && <AutoTopUpCard terms={terms} manage={can('billing.manage')} />}
      <Payments />
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
          {b.debt > 0 && <div><dt>Owed</dt><dd>{credits(b.debt)}</dd></div>}
          <div><dt>Spent in {b.cycle}</dt><dd data-testid="spent">{credits(b.spent_this_cycle)}</dd></div>
        </dl>
      )}
    </Section>
  );
}

type Terms = Extract<TopupTerms, { enabled: true }>;

/** An amount in the currency's smallest unit (cents), as people read it. */
const money = (minor: number, currency: string) => new Intl.NumberFormat(undefined, { style: 'currency', currency: currency.toUpperCase() }).format(minor / 100);
const priceOf = (n: number, terms: Terms) => Math.ceil(n * terms.price_per_credit - 1e-9);

/** Buying credits: Stripe Checkout for the amount; the credits arrive when Stripe confirms the payment. */
function BuyCredits({ terms }: { terms: Terms }) {
  const [amount, setAmount] = useState(terms.min_credits);
  const returned = new URLSearchParams(window.location.search).get('checkout');
  const buy = useMutation({ mutationFn: api.buyCredits, onSuccess: (payment) => { if (payment.checkout_url) window.location.assign(payment.checkout_url); } });
  return (
    <Section title="Buy credits">
      <form className="inline" onSubmit={(e) => { e.preventDefault(); buy.mutate(amount); }}>
        <Field label="Credits" name="credits" type="number" min={terms.min_credits} max={terms.max_credits} step={1} required
          value={amount} onChange={(e) => setAmount(Number(e.currentTarget.value))}
          hint={`${credits(terms.min_credits)} to ${credits(terms.max_credits)} credits; ${Number.isFinite(amount) && amount > 0 ? `${money(priceOf(amount, terms), terms.currency)} at checkout` : ''}`} />
        <button type="submit" disabled={buy.isPending}>Buy credits</button>
      </form>
      <ErrorNote error={buy.error} />
      {buy.isPending && <p role="status" className="muted">Opening the checkout…</p>}
      {returned === 'success' && <p role="status" className="ok">Thank you: the credits are added as soon as the payment is confirmed. Bought credits never expire.</p>}
      {returned === 'cancelled' && <p role="status" className="muted">The checkout was cancelled; nothing was charged.</p>}
    </Section>
  );
}

/** No payment processor: credits are added by the gateway's operators only. */
function OperatorsAddCredits() {
  const me = useQuery({ queryKey: ['me'], queryFn: api.me });
  return (
    <Section title="Adding credits">
      <p data-testid="credits-added-by">
        Credits cannot be bought here: this gateway has no payment processor. Its operators add credits to a workspace
        (ask them, naming your workspace{me.data?.workspace ? <> <code>{me.data.workspace.id}</code></> : null}); owners and billing members see every addition in the ledger.
      </p>
    </Section>
  );
}

function AutoTopUpCard({ terms, manage }: { terms: Terms; manage: boolean }) {
  const client = useQueryClient();
  const settings = useQuery({ queryKey: ['auto-topup'], queryFn: api.autoTopUp });
  const save = useMutation({ mutationFn: api.setAutoTopUp, onSuccess: (data) => client.setQueryData(['auto-topup'], data) });
  const s = settings.data;
  const hours = Math.round(terms.auto_topup_period_seconds / 3600);
  return (
    <Section title="Automatic top-up">
      {settings.isPending && <Loading what="the automatic top-up" />}
      <ErrorNote error={settings.error} />
      {s?.last_failure && <p className="error" role="alert">The last automatic top-up failed ({when(s.last_failure.at)}): {s.last_failure.message}</p>}
      {s && !s.payment_method && <p className="muted">Buy credits once to save a card; automatic top-ups charge it.</p>}
      {s && s.payment_method && (
        manage ? (
          <form className="inline" onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            save.mutate({ enabled: f.get('enabled') === 'on', threshold: Number(f.get('threshold')), credits: Number(f.get('credits')) });
          }}>
            <div className="field"><label><input type="checkbox" name="enabled" defaultChecked={s.enabled} /> Charge {s.payment_method} automatically</label></div>
            <Field label="When the balance falls below (credits)" name="threshold" type="number" min={0} step={1} defaultValue={s.threshold ?? 100} required />
            <Field label="Buy (credits)" name="credits" type="number" min={terms.min_credits} max={terms.max_credits} step={1} defaultValue={s.credits ?? terms.min_credits} required
              hint={`At most once every ${hours >= 1 ? `${hours} h` : `${terms.auto_topup_period_seconds} s`}.`} />
            <button type="submit" disabled={save.isPending}>Save</button>
          </form>
        ) : <p>{s.enabled ? `On: ${credits(s.credits ?? 0)} credits when the balance falls below ${credits(s.threshold ?? 0)}.` : 'Off.'}</p>
      )}
      <ErrorNote error={save.error} />
      {save.isSuccess && <p role="status" className="ok">Saved.</p>}
    </Section>
  );
}

const STATUS_LABEL: Record<Payment['status'], string> = {
  pending: 'pending', succeeded: 'paid', failed: 'failed', refunded: 'refunded', partially_refunded: 'partly refunded',
  disputed: 'disputed', dispute_won: 'dispute won', dispute_lost: 'dispute lost',
};

function Payments() {
  const returnedFrom = new URLSearchParams(window.location.search).get('payment');
  const payments = useQuery({
    queryKey: ['payments'], queryFn: api.payments,
    // Back from the checkout, while that payment waits for Stripe's confirmation, look again (the balance follows).
    refetchInterval: (q) => (q.state.data?.data.some((p) => p.id === returnedFrom && p.status === 'pending') ? 3000 : false),
  });
  const client = useQueryClient();
  const settled = payments.data?.data.filter((p) => p.status !== 'pending').length;
  useEffect(() => { if (settled) void client.invalidateQueries({ queryKey: ['balance'] }).then(() => client.invalidateQueries({ queryKey: ['ledger'] })); }, [settled, client]);
  return (
    <Section title="Payments">
      {payments.isPending && <Loading what="the payments" />}
      <ErrorNote error={payments.error} />
      {payments.data?.data.length === 0 && <Empty>No payments yet.</Empty>}
      {!!payments.data?.data.length && (
        <Table caption="Payments" head={['Date', 'Amount paid', 'Credits', 'Status', 'Receipt']}>
          {payments.data.data.map((p) => (
            <tr key={p.id} data-payment={p.id}>
              <td>{when(p.paid_at ?? p.created_at)}</td>
              <td>{money(p.amount, p.currency)}{p.amount_refunded > 0 && ` (${money(p.amount_refunded, p.currency)} refunded)`}</td>
              <td>{credits(p.credits)}{p.kind === 'auto' && ' (automatic)'}</td>
              <td>{STATUS_LABEL[p.status]}{p.failure_message && `: ${p.failure_message}`}</td>
              <td>{p.receipt_url ? <a href={p.receipt_url} target="_blank" rel="noreferrer">Receipt</a> : '—'}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}

/** A request's hold and what ended it, in words: "held 12 · released 12 · charged 9.4", "held 12 · refunded 12". */
function holdText(hold: NonNullable<LedgerEntry['hold']>): string {
  const parts = [`held ${credits(hold.held)}`];
  if (hold.released) parts.push(`released ${credits(hold.released)}`);
  if (hold.refunded) parts.push(`refunded ${credits(hold.refunded)}`);
  if (hold.charged || (!hold.open && !hold.refunded && !hold.released)) parts.push(`charged ${credits(hold.charged)}`);
  if (hold.open) parts.push('still open');
  return parts.join(' · ');
}

/** Who spent: the API key by name, or the member who made a Playground request. */
function madeBy(l: LedgerEntry): string {
  if (l.member) return `${l.member.name && l.member.email ? `${l.member.name} (${l.member.email})` : l.member.email ?? l.member.name ?? l.member.id} · Playground`;
  if (l.api_key) return `key ${l.api_key.name ?? l.api_key.id}`;
  return '—';
}

/** The ledger as the server groups it: a request's hold with its release and charge (or refund) is one row. */
function Ledger() {
  const ledger = useQuery({ queryKey: ['ledger'], queryFn: api.ledger });
  return (
    <Section title="Ledger">
      {ledger.isPending && <Loading what="the ledger" />}
      <ErrorNote error={ledger.error} />
      {ledger.data?.data.length === 0 && <Empty>No credit movements yet.</Empty>}
      {!!ledger.data?.data.length && (
        <Table caption="Latest credit movements" head={['When', 'Kind', 'Credits', 'Source', 'Request', 'Made by']}>
          {ledger.data.data.map((l) => (
            <tr key={l.id}>
              <td>{when(l.created_at)}</td><td>{l.kind}</td><td className={l.credits < 0 ? 'neg' : 'pos'}>{credits(l.credits)}</td>
              <td>{l.source ?? '—'}</td>
              <td>{l.model ?? (l.hold ? '' : '—')}{l.hold && <><br /><span className="ledger-hold">{holdText(l.hold)}</span></>}</td>
              <td>{madeBy(l)}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
