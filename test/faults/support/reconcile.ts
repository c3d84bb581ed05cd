/**
 * The books after a fault, checked from the database alone (the query each line names is the proof):
 * no hold left open, the ledger adding up to the balances, each request charged at most once and exactly
 * as its usage record says, and no key holding credits back.
 */
import type { Knex } from 'knex';

export interface Reconciliation {
  /** `select id from reservations where status = 'held'` */
  heldReservations: string[];
  /** Workspaces whose `sum(credit_ledger.amount_micro)` differs from `sum(credit_buckets.balance_micro)`. */
  ledgerNotBalances: string[];
  /** Requests with more than one settled reservation. */
  chargedTwice: string[];
  /** Reservations whose ledger rows do not add up to minus what they charged (0 when released). */
  rowsNotCharge: string[];
  /** Settled reservations without a usage record, or whose record shows another charge. */
  usageNotCharge: string[];
  /** Keys with `reserved_micro <> 0` (a hold never given back to a capped key). */
  keysStillReserving: string[];
}

export async function reconcile(db: Knex, workspaceIds: string[]): Promise<Reconciliation> {
  const ids = (sql: string) => db.raw(sql, [workspaceIds]).then((r: { rows: Array<{ id: string }> }) => r.rows.map((row) => row.id));
  return {
    heldReservations: await ids(`select id from reservations where status = 'held' and workspace_id = any(?)`),
    ledgerNotBalances: await ids(`
      select w.id from workspaces w
       where w.id = any(?)
         and (select coalesce(sum(amount_micro), 0) from credit_ledger l where l.workspace_id = w.id)
          <> (select coalesce(sum(balance_micro), 0) from credit_buckets b where b.workspace_id = w.id)`),
    chargedTwice: await ids(`
      select request_id as id from reservations where status = 'settled' and workspace_id = any(?)
       group by request_id having count(*) > 1`),
    rowsNotCharge: await ids(`
      select r.id from reservations r join credit_ledger l on l.reservation_id = r.id
       where r.workspace_id = any(?) and r.status <> 'held'
       group by r.id, r.charged_micro having sum(l.amount_micro) <> -coalesce(r.charged_micro, 0)`),
    usageNotCharge: await ids(`
      select r.id from reservations r left join usage_records u on u.request_id = r.request_id
       where r.workspace_id = any(?) and r.status = 'settled' and (u.request_id is null or u.credits_micro <> r.charged_micro)`),
    keysStillReserving: await ids(`select id from api_keys where workspace_id = any(?) and reserved_micro <> 0`),
  };
}

export const BALANCED: Reconciliation = {
  heldReservations: [], ledgerNotBalances: [], chargedTwice: [], rowsNotCharge: [], usageNotCharge: [], keysStillReserving: [],
};

/** One request's books, as the report shows them: its holds, its ledger rows and its usage record. */
export interface RequestBooks {
  reservations: Array<{ id: string; status: string; charged_micro: number | null }>;
  ledger: Array<{ kind: string; amount_micro: number }>;
  usage: { status: string; credits_micro: number } | null;
}

export async function booksOf(db: Knex, requestId: string): Promise<RequestBooks> {
  const reservations = await db('reservations').where({ request_id: requestId }).orderBy('id').select('id', 'status', 'charged_micro');
  const ledger = await db('credit_ledger').where({ request_id: requestId }).orderBy('id').select('kind', 'amount_micro');
  const usage = await db('usage_records').where({ request_id: requestId }).first('status', 'credits_micro');
  return {
    reservations: reservations.map((r) => ({ id: r.id, status: r.status, charged_micro: r.charged_micro === null ? null : Number(r.charged_micro) })),
    ledger: ledger.map((l) => ({ kind: l.kind, amount_micro: Number(l.amount_micro) })),
    usage: usage ? { status: usage.status, credits_micro: Number(usage.credits_micro) } : null,
  };
}

/** What a request was charged in the ledger (settle rows), in micro-credits. */
export function ledgerChargeMicro(books: RequestBooks): number {
  return -books.ledger.filter((l) => l.kind === 'settle').reduce((sum, l) => sum + l.amount_micro, 0);
}
