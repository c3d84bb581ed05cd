/**
 * The benchmark's summary in Markdown, from one run's results (what `npm run bench` prints at the end):
 * side by side with the floor and the peer, the targets with the margin by which each is met or missed,
 * overload, and what metrics and tracing cost. `node dist/bench/report.js bench/results/<file>.json`
 * prints it again for a stored run.
 */
import fs from 'node:fs';

/** A results file is untyped JSON. */
type Results = Record<string, any>;

const ms = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? 'n/a' : `${x.toFixed(1)} ms`);
const signedMs = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? 'n/a' : `${x >= 0 ? '+' : ''}${x.toFixed(1)} ms`);
const rps = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? 'n/a' : x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
const table = (head: string[], rows: string[][]) => [head, head.map((_, i) => (i === 0 ? '---' : '---:')), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
const statuses = (s: Record<string, number> | undefined) => Object.entries(s ?? {}).map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`).join(', ');

export function markdownReport(r: Results): string {
  const out: string[] = [];
  const floor = r.floor;
  const gw = r.variants?.default;

  const rows: string[][] = [[
    'mock directly', ms(r.direct.serial.p50), '', rps(r.direct.concurrent.rps), ms(r.direct.concurrent.p99), `(${ms(r.direct.stream.ttft_p50)})`, '',
  ]];
  if (r.peer) rows.push([r.peer.name, ms(r.peer.serial.p50), signedMs(r.peer.added.p50_ms), rps(r.peer.concurrent.rps), ms(r.peer.concurrent.p99), signedMs(r.peer.added.ttft_p50_ms), '']);
  if (floor) {
    rows.push(['floor: empty workflow', ms(floor.empty.serial.p50), '', rps(floor.empty.concurrent.rps), ms(floor.empty.concurrent.p99), '', '']);
    rows.push(['floor: one local activity', ms(floor.oneLocalActivity.serial.p50), '', rps(floor.oneLocalActivity.concurrent.rps), ms(floor.oneLocalActivity.concurrent.p99), '', '']);
  }
  for (const [name, v] of Object.entries<any>(r.variants ?? {})) {
    rows.push([`this gateway (${name})`, ms(v.serial.p50), signedMs(v.added.p50_ms), rps(v.concurrent.rps), ms(v.concurrent.p99), signedMs(v.added.ttft_p50_ms), v.memory ? `${Math.round(v.memory.peakRssMiB)} MiB` : 'n/a']);
  }
  out.push(table([`concurrency 1 / ${r.settings.concurrency}`, 'p50 @1', 'added p50 @1', `req/s @${r.settings.concurrency}`, `p99 @${r.settings.concurrency}`, 'added TTFT p50', `peak RSS @${r.settings.concurrency}`], rows));

  if (gw && floor) {
    const f = floor.empty;
    const line = (target: string, floorValue: string, measured: string, met: boolean, margin: string) => [target, floorValue, measured, met ? `met (${margin})` : `**missed** by ${margin}`];
    const rpsGoal = 0.9 * f.concurrent.rps;
    const p50Goal = f.serial.p50 + 3;
    const ttft = gw.stream.ttft_p50;
    const overloadOther = Object.keys(gw.overload?.statuses ?? {}).filter((s) => !['200', '429', '503'].includes(s));
    const rss = gw.memory?.peakRssMiB;
    out.push('', table(['target (default variant)', 'floor', 'measured', ''], [
      line(`req/s @${r.settings.concurrency} >= 90% of the empty workflow's`, `${rps(f.concurrent.rps)} (90%: ${rps(rpsGoal)})`, `${rps(gw.concurrent.rps)} (${Math.round(gw.vsFloor.rps_ratio * 100)}% of the floor)`, gw.concurrent.rps >= rpsGoal, `${rps(Math.abs(rpsGoal - gw.concurrent.rps))} req/s, ${(rpsGoal / gw.concurrent.rps).toFixed(1)}x`),
      line("p50 @1 (end to end) <= the empty workflow's p50 + 3 ms", `${ms(f.serial.p50)} (+3: ${ms(p50Goal)})`, ms(gw.serial.p50), gw.serial.p50 <= p50Goal, ms(Math.abs(gw.serial.p50 - p50Goal))),
      line("time to first token <= the empty workflow's p50 + 3 ms", ms(p50Goal), ms(ttft), ttft <= p50Goal, ms(Math.abs(ttft - p50Goal))),
      line('peak RSS <= 300 MB', '', rss === undefined ? 'n/a' : `${Math.round(rss * 1.048576)} MB`, rss !== undefined && rss * 1.048576 <= 300, rss === undefined ? 'n/a' : `${Math.abs(Math.round(300 - rss * 1.048576))} MB`),
      line(`zero errors @${r.settings.concurrency}`, '', `${gw.concurrent.errors} errors (${statuses(gw.concurrent.statuses)})`, gw.concurrent.errors === 0, `${gw.concurrent.errors} errors`),
      ...(gw.overload ? [line(`only 429/503 @${r.settings.overloadConcurrency}`, '', statuses(gw.overload.statuses), overloadOther.length === 0, overloadOther.length ? overloadOther.join(', ') : 'nothing else')] : []),
    ]));
  }

  if (gw?.overload) {
    const o = gw.overload;
    out.push('', table([`overload: concurrency ${r.settings.overloadConcurrency} for ${r.settings.overloadMs / 1000} s`, 'answers', 'served req/s', 'served p50', 'served p90', 'served p99', 'served max', 'refusal p99'], [[
      'this gateway (default)', statuses(o.statuses), rps(o.rps), ms(o.p50), ms(o.p90), ms(o.p99), ms(o.max), ms(o.refused_p99),
    ]]));
  }

  const phaseRows = Object.entries<any>(r.variants ?? {}).filter(([, v]) => v.serial.serverTiming_p50).map(([name, v]) => {
    const p = v.serial.serverTiming_p50;
    const s = v.stream.serverTiming_p50 ?? {};
    const inside = (p.admission ?? 0) + (p.start ?? 0) + (p.run ?? 0);
    return [`this gateway (${name})`, ms(p.admission), ms(p.start), ms(p.run), ms(v.serial.p50), ms(v.serial.p50 - inside), ms(s.admission), ms(s.start), ms(v.stream.ttft_p50)];
  });
  // The floor's eager start alone, beside the gateway's (runs since 2026-11-26 16:00 record it).
  for (const [label, f] of [['floor: one local activity', floor?.oneLocalActivity], ['floor: empty workflow', floor?.empty]] as const) {
    if (phaseRows.length && f?.serial.startP50 !== undefined) phaseRows.unshift([label, '', ms(f.serial.startP50), ms(f.serial.p50 - f.serial.startP50), ms(f.serial.p50), '', '', '', '']);
  }
  if (phaseRows.length) {
    out.push('', table(['where the time goes @1 (p50 of Server-Timing)', 'admission', 'workflow start', 'run (hops)', 'client p50', 'outside the phases', 'stream: admission', 'stream: start', 'TTFT'], phaseRows));
  }

  const cpuRows: string[][] = [];
  const cpu = (name: string, c: Record<string, number> | undefined, own: string) => {
    if (c) cpuRows.push([name, ms(c[own]), ms(c.temporal)]);
  };
  cpu('floor: empty workflow', floor?.empty.concurrent.cpuMsPerRequest, 'floor');
  cpu('floor: one local activity', floor?.oneLocalActivity.concurrent.cpuMsPerRequest, 'floor');
  for (const [name, v] of Object.entries<any>(r.variants ?? {})) cpu(`this gateway (${name})`, v.concurrent.cpuMsPerRequest, 'gateway');
  if (cpuRows.length) out.push('', table([`CPU time per request @${r.settings.concurrency}`, 'client + worker process', 'Temporal server'], cpuRows));

  const off = r.variants?.['metrics-off'];
  const traced = r.variants?.tracing;
  if (gw && (off || traced)) {
    const cpuOf = (v: any) => v.concurrent.cpuMsPerRequest?.gateway;
    const cost = (name: string, with_: any, without: any) => [
      name, signedMs(with_.serial.p50 - without.serial.p50),
      `${rps(without.concurrent.rps)} -> ${rps(with_.concurrent.rps)} (${(((with_.concurrent.rps - without.concurrent.rps) / without.concurrent.rps) * 100).toFixed(1)}%)`,
      signedMs((with_.stream.ttft_p50 ?? NaN) - (without.stream.ttft_p50 ?? NaN)),
      `${ms(cpuOf(without))} -> ${ms(cpuOf(with_))}`,
    ];
    out.push('', table(['cost of', 'p50 @1', `req/s @${r.settings.concurrency}`, 'TTFT p50', `gateway CPU per request @${r.settings.concurrency}`], [
      ...(off ? [cost('metrics (default vs metrics-off)', gw, off)] : []),
      ...(traced ? [cost('tracing (tracing vs default)', traced, gw)] : []),
    ]));
  }
  const load = r.machine.loadAverageAtStart;
  out.push('', `Load average at start ${load?.join(' / ') ?? 'n/a'}, at end ${r.machine.loadAverageAtEnd?.join(' / ') ?? 'n/a'} (${r.machine.cpus} CPUs).`);
  return out.join('\n');
}

if (require.main === module) {
  console.log(markdownReport(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Results));
}
