/**
 * The usage chart itself (Recharts), loaded on its own when Billing shows usage: bars of credits, one per
 * label. Days are columns over time; keys, members and models are rows, the largest first. The chart is a
 * picture for the eye: its text alternative (the values, in words and as a table) is UsageCharts'.
 * Its colours come from the stylesheet (`.usage-chart`), so they follow the light and dark themes.
 */
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { credits } from '../../ui';

export interface ChartRow {
  label: string;
  /** A shorter label for the axis (a member's name without the address); the tooltip and table have `label`. */
  tick?: string;
  value: number;
}

/** A long label cut for an axis (the table and the tooltip have it whole). */
const cut = (label: string, max: number) => (label.length > max ? `${label.slice(0, max - 1)}…` : label);

/** Axes in the theme's muted ink (Recharts would draw them grey, too faint on the dark card). */
const axis = { tick: { fill: 'var(--muted)' }, stroke: 'var(--muted)' };

const tooltip = {
  contentStyle: { background: 'var(--card)', border: '1px solid var(--line)', color: 'var(--ink)' },
  labelStyle: { color: 'var(--ink)' },
  itemStyle: { color: 'var(--ink)' },
  cursor: { fill: 'var(--accent-soft)' },
  formatter: (value: unknown) => [`${credits(Number(value))} credits`, 'Charged'] as [string, string],
};

export default function UsageChart({ rows, columns }: { rows: ChartRow[]; columns: boolean }) {
  const narrow = typeof window !== 'undefined' && window.innerWidth < 640;
  if (columns) {
    return (
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid vertical={false} />
          <XAxis {...axis} dataKey="label" tickFormatter={(d: string) => d.slice(5)} interval="preserveStartEnd" minTickGap={12} />
          <YAxis {...axis} width={56} tickFormatter={(n: number) => credits(n)} />
          <Tooltip {...tooltip} />
          <Bar dataKey="value" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    );
  }
  const axisWidth = narrow ? 140 : 240;
  const ticks = new Map(rows.map((r) => [r.label, r.tick ?? r.label]));
  return (
    <ResponsiveContainer width="100%" height={Math.max(80, rows.length * 34 + 36)}>
      <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 0, left: 0 }} accessibilityLayer={false}>
        <CartesianGrid horizontal={false} />
        <XAxis {...axis} type="number" tickFormatter={(n: number) => credits(n)} />
        <YAxis {...axis} type="category" dataKey="label" width={axisWidth} tickFormatter={(l: string) => cut(ticks.get(l) ?? l, narrow ? 18 : 32)} />
        <Tooltip {...tooltip} />
        <Bar dataKey="value" isAnimationActive={false} barSize={18} />
      </BarChart>
    </ResponsiveContainer>
  );
}
