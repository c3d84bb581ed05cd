/** Reading the gateway's `GET /metrics` (Prometheus text) in tests. */
import type { TestGateway } from './gateway';

/** `GET /metrics` with the gateway's operator token (the configured one, else the generated development one). */
export async function scrapeMetrics(gateway: TestGateway, headers: Record<string, string> = { authorization: `Bearer ${gateway.runtime.operatorToken}` }): Promise<string> {
  const response = await fetch(`${gateway.url}/metrics`, { headers });
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return response.text();
}

/** The value of the sample `name` with exactly these labels (0 when there is none yet). */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).sort().map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = (match[2] ?? '').match(/[a-zA-Z_]\w*="(?:[^"\\]|\\.)*"/g)?.sort().join(',') ?? '';
    if (got === wanted) return Number(match[3]);
  }
  return 0;
}
