/** Under each assistant message: what it cost (from the ledger), the model that served, and its run's timeline. */
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { playground, type ChatMessage } from '../../playground-api';
import { credits } from '../../ui';

export function Receipt({ message }: { message: ChatMessage }) {
  const [open, setOpen] = useState(false);
  const r = message.receipt;
  const timeline = useQuery({ queryKey: ['playground', 'timeline', message.id], queryFn: () => playground.timeline(message.id), enabled: open });
  if (!r) return null;
  const units = r.units ? Object.entries(r.units).map(([k, v]) => `${v} ${k}`).join(', ') : `${r.inputTokens} in · ${r.outputTokens} out tokens`;
  return (
    <div className="receipt" aria-label="Receipt" data-request-id={r.requestId}>
      <span data-testid="receipt-credits">{credits(r.credits)}</span> credits · {units} · served by <b>{r.modelUsed ?? '—'}</b>
      {r.deployment && <> on deployment <b data-testid="receipt-deployment">{r.deployment}</b></>}
      {r.fallbackDepth > 0 && <> (fell back from {r.modelRequested}, {r.fallbackDepth} hop{r.fallbackDepth > 1 ? 's' : ''})</>}
      {r.keySource === 'workspace' && <> · <span data-testid="receipt-key-source">your key</span></>}
      {r.latencyMs !== null && <> · {r.latencyMs} ms</>}
      {' '}<button type="button" className="link" onClick={() => setOpen(!open)} aria-expanded={open}>Timeline</button>
      {open && (
        <ol className="timeline" aria-label="Run timeline">
          {timeline.data?.data.map((s, i) => <li key={i}><b>{s.step}</b>{s.detail && <span className="muted"> {s.detail}</span>}</li>)}
          {r.ledger.map((l, i) => <li key={`l${i}`} className="muted">ledger {l.kind} {credits(l.amountMicro / 1e6)}</li>)}
        </ol>
      )}
    </div>
  );
}
