import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { credits, day, Empty, ErrorNote, Loading, Section } from '../../ui';

const GROUPS = [{ id: 'day', label: 'By day' }, { id: 'model', label: 'By model' }, { id: 'api_key_id', label: 'By key' }, { id: 'user_id', label: 'By member' }];

/**
 * Charged credits of the last 30 days as horizontal bars, by day, model, key or member. By member, what a
 * member spent in the Playground is a bar of its own beside what their keys spent.
 */
export function UsageCharts() {
  const [group, setGroup] = useState('day');
  const costs = useQuery({ queryKey: ['costs', group], queryFn: () => api.costs(group === 'day' ? '' : group) });
  const users = useQuery({ queryKey: ['users'], queryFn: api.users, enabled: group === 'user_id' });
  const member = (id: string | null) => users.data?.data.find((u) => u.id === id)?.email ?? id ?? 'operator';
  const rows = new Map<string, number>();
  for (const bucket of costs.data?.data ?? []) {
    for (const r of bucket.results) {
      const label = group === 'day' ? day(bucket.start_time)
        : group === 'user_id' ? `${member(r.user_id)}${r.source === 'playground' ? ' · Playground' : ''}`
          : String((r as Record<string, unknown>)[group] ?? 'operator');
      rows.set(label, (rows.get(label) ?? 0) + r.amount.value);
    }
  }
  const max = Math.max(0, ...rows.values());
  return (
    <Section title="Usage (last 30 days)" actions={
      <div role="tablist" aria-label="Group usage" className="tabs">
        {GROUPS.map((g) => <button key={g.id} role="tab" type="button" aria-selected={group === g.id} className={group === g.id ? '' : 'secondary'} onClick={() => setGroup(g.id)}>{g.label}</button>)}
      </div>
    }>
      {costs.isPending && <Loading what="usage" />}
      <ErrorNote error={costs.error} />
      {costs.data && rows.size === 0 && <Empty>No charges in the last 30 days.</Empty>}
      <ul className="bars" aria-label="Credits charged">
        {[...rows].map(([label, value]) => (
          <li key={label}>
            <span className="bar-label">{label}</span>
            <span className="bar" style={{ width: `${max ? Math.max(2, (value / max) * 100) : 0}%` }} aria-hidden="true" />
            <span className="bar-value">{credits(value)}</span>
          </li>
        ))}
      </ul>
    </Section>
  );
}
