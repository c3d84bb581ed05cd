import { lazy, Suspense, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import type { CostPage } from '../../types';
import { credits, day, Empty, ErrorNote, Loading, Section, Table } from '../../ui';
import type { ChartRow } from './UsageChart';

/** The chart library is a chunk of its own, loaded when usage is shown (most pages never need it). */
const UsageChart = lazy(() => import('./UsageChart'));

const GROUPS = [
  { id: 'day', label: 'By day', column: 'Day' },
  { id: 'model', label: 'By model', column: 'Model' },
  { id: 'api_key_id', label: 'By key', column: 'API key' },
  { id: 'user_id', label: 'By member', column: 'Member' },
] as const;
type Group = (typeof GROUPS)[number]['id'];
type CostResult = CostPage['data'][number]['results'][number];

/** What a result is called (and, shorter, on the chart's axis): the key's and the member's names come with the report. */
function labelOf(group: Group, r: CostResult): { label: string; tick?: string } {
  if (group === 'model') return { label: r.model ?? 'other' };
  if (group === 'api_key_id') return { label: r.api_key_id ? r.api_key_name ?? r.api_key_id : 'No key (Playground)' };
  const where = r.source === 'playground' ? ' · Playground' : '';
  const member = r.user_name && r.user_email ? `${r.user_name} (${r.user_email})` : r.user_email ?? r.user_name ?? r.user_id ?? 'operator';
  return { label: `${member}${where}`, tick: `${r.user_name ?? member}${where}` };
}

/**
 * Charged credits of the last 30 days as a bar chart, by day, model, key or member. By member, what a member
 * spent in the Playground is a bar of its own beside what their keys spent. Every chart has its text
 * alternative: its values in words (the chart's accessible name) and as a table.
 */
export function UsageCharts() {
  const [group, setGroup] = useState<Group>('day');
  const costs = useQuery({ queryKey: ['costs', group], queryFn: () => api.costs(group === 'day' ? '' : group) });
  const rows = new Map<string, ChartRow>();
  for (const bucket of costs.data?.data ?? []) {
    if (group === 'day') rows.set(day(bucket.start_time), { label: day(bucket.start_time), value: bucket.results.reduce((n, r) => n + r.amount.value, 0) });
    for (const r of group === 'day' ? [] : bucket.results) {
      const named = labelOf(group, r);
      rows.set(named.label, { ...named, value: (rows.get(named.label)?.value ?? 0) + r.amount.value });
    }
  }
  const chart = [...rows.values()];
  if (group !== 'day') chart.sort((a, b) => b.value - a.value);
  const charged = chart.filter((r) => r.value > 0);
  const { label: groupLabel, column } = GROUPS.find((g) => g.id === group)!;
  const described = `Bar chart of credits charged in the last 30 days, ${groupLabel.toLowerCase()}: `
    + `${charged.map((r) => `${r.label}, ${credits(r.value)}`).join('; ')}${group === 'day' ? ' (days without charges left out)' : ''}.`;
  return (
    <Section title="Usage (last 30 days)" actions={
      <div role="tablist" aria-label="Group usage" className="tabs">
        {GROUPS.map((g) => <button key={g.id} role="tab" type="button" aria-selected={group === g.id} className={group === g.id ? '' : 'secondary'} onClick={() => setGroup(g.id)}>{g.label}</button>)}
      </div>
    }>
      {costs.isPending && <Loading what="usage" />}
      <ErrorNote error={costs.error} />
      {costs.data && charged.length === 0 && <Empty>No charges in the last 30 days.</Empty>}
      {charged.length > 0 && (
        <>
          <div className="usage-chart" role="img" aria-label={described} data-testid="usage-chart">
            <Suspense fallback={<div className="usage-chart-loading" />}>
              <UsageChart rows={group === 'day' ? chart : charged} columns={group === 'day'} />
            </Suspense>
          </div>
          <details className="chart-values">
            <summary>The values as a table</summary>
            <Table caption={`Credits charged, ${groupLabel.toLowerCase()}`} head={[column, 'Credits']}>
              {charged.map((r) => <tr key={r.label}><th scope="row">{r.label}</th><td className="num">{credits(r.value)}</td></tr>)}
            </Table>
          </details>
        </>
      )}
    </Section>
  );
}
