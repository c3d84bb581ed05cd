/** A workspace's credits as its billing admins see them: balance by source, plan, and the cycle's spend. */
import type { Knex } from 'knex';
import { cycleSpendMicro } from './budget-evaluation';
import { getBalance } from './ledger';
import { microToCredits } from '../core/money';
import { planOfWorkspace } from './plans';

export async function billingSummary(db: Knex, opts: { workspaceId: string; cycle: string }) {
  const [balance, plan, spendMicro] = await Promise.all([
    getBalance(db, opts.workspaceId), planOfWorkspace(db, opts.workspaceId), cycleSpendMicro(db, opts.workspaceId, opts.cycle),
  ]);
  return {
    object: 'billing.balance' as const,
    workspace_id: opts.workspaceId,
    cycle: opts.cycle,
    balance: microToCredits(balance.totalMicro),
    plan_credits: microToCredits(balance.planMicro),
    topup_credits: microToCredits(balance.topupMicro),
    /** Charges no balance covered; the next grant or topup pays them first. */
    debt: microToCredits(balance.debtMicro),
    spent_this_cycle: microToCredits(spendMicro),
    plan: plan && {
      id: plan.id,
      name: plan.name,
      monthly_credits: microToCredits(plan.monthlyCreditsMicro),
      rollover: plan.rollover,
      rollover_cap: plan.rolloverCapMicro === null ? null : microToCredits(plan.rolloverCapMicro),
    },
  };
}

/** The kinds of ledger row that move a request's hold: taken, given back, charged, refunded. */
const HOLD_KINDS = ['reserve', 'release', 'settle', 'refund'] as const;
type HoldKind = (typeof HOLD_KINDS)[number];

/** One ledger row inside an entry. */
export interface LedgerMovement {
  id: number;
  kind: string;
  credits: number;
  source: 'plan' | 'topup' | 'debt' | null;
  created_at: number;
}

/**
 * The latest credit movements a person reads on the billing page, newest first (by when each began). The ledger stays a list of
 * rows; here the rows of one hold (its reservation) are one entry, so a release or refund is read beside the
 * hold it ends: `held` (taken when the request started), `released` or `refunded` (given back), `charged`
 * (settled). `kind` is what became of the hold (`settle`, `refund`, `release`, or `reserve` while it is
 * open); other rows (grants, topups, expiries, rollovers, adjustments, repayments) are entries of their own.
 * An entry names the API key (`api_key`) or, for a Playground request, the member who made it (`member`).
 */
export async function ledgerEntries(db: Knex, workspaceId: string, limit = 100) {
  // The entries of the latest rows (a request has a handful), then every row of those entries.
  const latest = await db('credit_ledger').where('workspace_id', workspaceId).orderBy('id', 'desc').limit(limit * 8).select('id', 'reservation_id');
  const groupOf = (r: { id: unknown; reservation_id: string | null }) => r.reservation_id ?? `row:${r.id}`;
  const groups = [...new Set(latest.map(groupOf))].slice(0, limit);
  const reservations = groups.filter((g) => !g.startsWith('row:'));
  const rowIds = groups.filter((g) => g.startsWith('row:')).map((g) => Number(g.slice(4)));
  const rows = await db('credit_ledger as l').leftJoin('credit_buckets as b', 'b.id', 'l.bucket_id')
    .leftJoin('api_keys as k', 'k.id', 'l.api_key_id')
    .leftJoin('usage_records as u', 'u.request_id', 'l.request_id')
    .leftJoin('users as m', 'm.id', 'u.user_id')
    .where('l.workspace_id', workspaceId)
    .where((w) => { w.whereIn('l.reservation_id', reservations).orWhereIn('l.id', rowIds); })
    .orderBy('l.id', 'asc')
    .select('l.id', 'l.kind', 'l.amount_micro', 'l.model', 'l.api_key_id', 'l.request_id', 'l.reservation_id', 'l.created_at', 'b.kind as source',
      'k.name as key_name', 'u.user_id', 'm.name as member_name', 'm.email as member_email');
  const byGroup = new Map<string, typeof rows>();
  for (const r of rows) byGroup.set(groupOf(r), [...(byGroup.get(groupOf(r)) ?? []), r]);
  // Newest first, by when each began (a request's hold, when it was asked).
  return [...byGroup.values()].sort((a, b) => Number(b[0].id) - Number(a[0].id)).map(ledgerEntry);
}

const seconds = (at: string | Date) => Math.floor(new Date(at).getTime() / 1000);

/** One entry of rows of the same hold (oldest first), or of a single row. */
function ledgerEntry(rows: any[]) {
  const [first] = rows;
  const sum = (kind: HoldKind) => microToCredits(rows.filter((r) => r.kind === kind).reduce((n, r) => n + Math.abs(Number(r.amount_micro)), 0));
  const has = (kind: HoldKind) => rows.some((r) => r.kind === kind);
  const hold = first.reservation_id !== null && rows.every((r) => (HOLD_KINDS as readonly string[]).includes(r.kind));
  const kind = !hold ? first.kind as string : has('settle') ? 'settle' : has('refund') ? 'refund' : has('release') ? 'release' : 'reserve';
  const sources = [...new Set(rows.map((r) => r.source as LedgerMovement['source']))];
  const person = rows.find((r) => r.user_id);
  return {
    object: 'billing.ledger_entry' as const,
    id: Number(first.id),
    kind,
    /** What the entry did to the balance (a closed hold: minus its charge). */
    credits: microToCredits(rows.reduce((n, r) => n + Number(r.amount_micro), 0)),
    source: sources.length === 1 ? sources[0] : null,
    model: ([...rows].reverse().find((r) => r.model)?.model ?? null) as string | null,
    api_key_id: first.api_key_id as string | null,
    api_key: first.api_key_id ? { id: first.api_key_id as string, name: (first.key_name ?? null) as string | null } : null,
    /** A Playground request: the member who made it. */
    member: person ? { id: person.user_id as string, name: person.member_name as string | null, email: person.member_email as string | null } : null,
    request_id: first.request_id as string | null,
    reservation_id: first.reservation_id as string | null,
    hold: hold ? { held: sum('reserve'), released: sum('release'), refunded: sum('refund'), charged: sum('settle'), open: kind === 'reserve' } : null,
    movements: rows.map((r): LedgerMovement => ({ id: Number(r.id), kind: r.kind, credits: microToCredits(Number(r.amount_micro)), source: r.source ?? null, created_at: seconds(r.created_at) })),
    created_at: seconds(first.created_at),
  };
}
