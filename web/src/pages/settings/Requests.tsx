/**
 * The request log: the workspace's requests newest first (a Developer's own), filtered by time, model, key,
 * member, status, endpoint and minimum cost, or found by request id / the client's X-Request-Id; pages load on
 * demand, the same rows download as CSV, and each row opens what became of it (error, fallback hops, charge).
 */
import { Fragment, useState, type FormEvent } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api, requestLogQuery } from '../../api';
import { useCan } from '../../session';
import type { RequestLogEntry } from '../../types';
import { credits, Empty, ErrorNote, Field, FixLink, fixFor, Loading, Section, Select, Table, when } from '../../ui';

const RANGES = [
  { value: '', label: 'Any time' }, { value: '3600', label: 'Last hour' }, { value: '86400', label: 'Last 24 hours' },
  { value: '604800', label: 'Last 7 days' }, { value: '2592000', label: 'Last 30 days' },
];
const STATUSES = [{ value: '', label: 'Any status' }, { value: 'succeeded', label: 'Succeeded' }, { value: 'failed', label: 'Failed' }, { value: 'cancelled', label: 'Cancelled' }];
const ENDPOINTS = ['chat.completions', 'responses', 'messages', 'completions', 'embeddings', 'images', 'audio.speech', 'audio.transcriptions', 'moderations', 'videos', 'music'];

interface Filters { range: string; model: string; api_key_id: string; user_id: string; status: string; endpoint: string; min_credits: string; request_id: string }
const NONE: Filters = { range: '', model: '', api_key_id: '', user_id: '', status: '', endpoint: '', min_credits: '', request_id: '' };

/** The filters as the API takes them: the range becomes a start time, fixed when the filters were applied. */
function queryOf({ range, ...rest }: Filters, appliedAt: number): Record<string, string> {
  return { ...rest, start_time: range ? String(appliedAt - Number(range)) : '' };
}

export function Requests() {
  const can = useCan();
  const [filters, setFilters] = useState<Filters>(NONE);
  const [appliedAt, setAppliedAt] = useState(() => Math.floor(Date.now() / 1000));
  const query = queryOf(filters, appliedAt);
  const log = useInfiniteQuery({
    queryKey: ['request-log', query],
    queryFn: ({ pageParam }) => api.requestLog(query, pageParam || undefined),
    initialPageParam: '',
    getNextPageParam: (last) => (last.has_more ? last.last_id : undefined),
  });
  const keys = useQuery({ queryKey: ['keys'], queryFn: api.keys, enabled: can('api_keys.read') });
  const users = useQuery({ queryKey: ['users'], queryFn: api.users, enabled: can('usage.read') });
  const apply = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setFilters(Object.fromEntries(Object.keys(NONE).map((k) => [k, String(f.get(k) ?? '').trim()])) as unknown as Filters);
    setAppliedAt(Math.floor(Date.now() / 1000));
  };
  const rows = log.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <>
      <Section title="Find requests">
        <form className="grid" onSubmit={apply} aria-label="Request log filters">
          <Select label="Time" name="range" defaultValue={filters.range} options={RANGES} />
          <Field label="Model (asked or used)" name="model" defaultValue={filters.model} placeholder="any" />
          {can('api_keys.read') && (
            <Select label="API key" name="api_key_id" defaultValue={filters.api_key_id}
              options={[{ value: '', label: 'Any key' }, ...(keys.data?.data ?? []).map((k) => ({ value: k.id, label: k.name }))]} />
          )}
          {can('usage.read') && (
            <Select label="Member" name="user_id" defaultValue={filters.user_id}
              options={[{ value: '', label: 'Anyone' }, ...(users.data?.data ?? []).map((u) => ({ value: u.id, label: u.email }))]} />
          )}
          <Select label="Status" name="status" defaultValue={filters.status} options={STATUSES} />
          <Select label="Endpoint" name="endpoint" defaultValue={filters.endpoint} options={[{ value: '', label: 'Any endpoint' }, ...ENDPOINTS.map((e) => ({ value: e, label: e }))]} />
          <Field label="Minimum credits" name="min_credits" type="number" min={0} step="any" defaultValue={filters.min_credits} placeholder="0" />
          <Field label="Request id or X-Request-Id" name="request_id" defaultValue={filters.request_id} placeholder="req_… or your own id" />
          <button type="submit">Search</button>
        </form>
      </Section>
      <Section title="Requests" actions={<a className="button-link" href={`/v1/organization/requests?${requestLogQuery({ ...query, format: 'csv' })}`} download="requests.csv">Export CSV</a>}>
        {log.isPending && <Loading what="requests" />}
        <ErrorNote error={log.error} />
        {log.isSuccess && rows.length === 0 && <Empty>No request matches these filters.</Empty>}
        {rows.length > 0 && (
          <Table caption="Requests, newest first" head={['Time', 'Endpoint', 'Model', 'Key or member', 'Status', 'Tokens', 'Credits', 'Latency', '']}>
            {rows.map((r) => <RequestRow key={r.id} row={r} />)}
          </Table>
        )}
        {log.hasNextPage && (
          <div className="row"><button type="button" className="secondary" disabled={log.isFetchingNextPage} onClick={() => void log.fetchNextPage()}>{log.isFetchingNextPage ? 'Loading…' : 'Load more'}</button></div>
        )}
      </Section>
    </>
  );
}

function RequestRow({ row: r }: { row: RequestLogEntry }) {
  const [open, setOpen] = useState(false);
  const who = r.api_key ? `${r.api_key.name}${r.member ? ` (${r.member.email})` : ''}` : r.member ? `${r.member.email} · Playground` : '—';
  return (
    <Fragment>
      <tr data-request-id={r.id}>
        <td>{when(r.created_at)}</td>
        <td>{r.endpoint}</td>
        <td>{r.model_used && r.model_used !== r.model_requested ? <>{r.model_requested} → {r.model_used}</> : r.model_requested}</td>
        <td>{who}</td>
        <td>{r.status === 'succeeded' ? 'succeeded' : <span className="error">{r.status}{r.error_code ? ` (${r.error_code})` : ''}</span>}</td>
        <td>{r.input_tokens} in · {r.output_tokens} out</td>
        <td>{credits(r.credits)}{r.key_source === 'workspace' && <span className="muted"> · your key</span>}</td>
        <td>{r.latency_ms === null ? '—' : `${r.latency_ms} ms`}</td>
        <td className="actions"><button type="button" className="small secondary" aria-expanded={open} aria-label={`Details of ${r.id}`} onClick={() => setOpen(!open)}>Details</button></td>
      </tr>
      {open && <tr className="details"><td colSpan={9}><RequestDetails row={r} /></td></tr>}
    </Fragment>
  );
}

function RequestDetails({ row }: { row: RequestLogEntry }) {
  const outcome = useQuery({ queryKey: ['request-outcome', row.id], queryFn: () => api.requestOutcome(row.id) });
  return (
    <dl className="pairs" aria-label={`Request ${row.id}`}>
      <div><dt>Request id</dt><dd><code>{row.id}</code></dd></div>
      {row.client_request_id && <div><dt>Your X-Request-Id</dt><dd><code>{row.client_request_id}</code></dd></div>}
      {outcome.isPending && <Loading what="the outcome" />}
      <ErrorNote error={outcome.error} />
      {outcome.data?.fallback_hops && <div><dt>Hops</dt><dd>{outcome.data.fallback_hops.map((h) => `${h.model}: ${h.outcome}`).join(' → ')}</dd></div>}
      {outcome.data?.error && <div><dt>Error</dt><dd>{outcome.data.error.type}{outcome.data.error.code ? ` (${outcome.data.error.code})` : ''}: {outcome.data.error.message}<FixLink fix={fixFor({ code: outcome.data.error.code ?? null })} /></dd></div>}
      {outcome.data && <div><dt>Charged</dt><dd>{credits(outcome.data.credits_used ?? 0)} credits</dd></div>}
    </dl>
  );
}
