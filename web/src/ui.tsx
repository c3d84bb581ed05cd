/** Small building blocks shared by the pages: states (loading, empty, error), fields, tables, dates. */
import { useId, type ReactNode, type InputHTMLAttributes, type SelectHTMLAttributes } from 'react';
import { ApiError } from './api';
import { Link } from './router';

export function Loading({ what }: { what: string }) {
  return <p className="muted" role="status" aria-live="polite">Loading {what}…</p>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** A failure as the app knows it: an API error's status and code, or a Playground message's code (and whose provider key served it). */
export interface Failure {
  status?: number | null;
  code: string | null;
  keySource?: 'platform' | 'workspace';
}

/** Where a failure is put right, and what to do there (`hint`: a sentence before the link, or alone when there is no page for it). */
export interface Fix {
  hint?: string;
  to?: string;
  label?: string;
}

/**
 * Where a failure is put right: no credits in Billing, a key's limits, models and cost cap in API keys, a provider
 * without a key (or whose key of the workspace's own was refused) in Provider keys; a provider's throttling is waited out.
 */
export function fixFor(failure: Failure): Fix | null {
  const { status, code } = failure;
  if (status === 402 || code === 'insufficient_credits') return { to: '/settings/billing', label: 'Add credits in Billing' };
  if (code === 'key_cost_cap_exceeded') return { to: '/settings/keys', label: 'Raise the key’s cost cap in API keys' };
  if (code === 'model_not_allowed') return { to: '/settings/keys', label: 'Change the key’s models in API keys' };
  if (code === 'provider_not_configured') return { to: '/settings/provider-keys', label: 'Add a key for this provider in Provider keys' };
  if (code === 'provider_auth_failed') {
    return failure.keySource === 'platform' ? { hint: 'The gateway’s own key for this provider was refused: its operator has to replace it.' }
      : { hint: failure.keySource === 'workspace' ? 'The provider refused this workspace’s own key.' : 'The provider refused the key.', to: '/settings/provider-keys', label: 'Replace it in Provider keys' };
  }
  if (code === 'upstream_rate_limited' || code === 'deployments_unavailable') {
    return { hint: 'The provider is throttling requests: wait a minute and send again, or let another model take over.', to: '/settings/fallbacks', label: 'Set a fallback chain' };
  }
  if (status === 429 || code === 'rate_limit_exceeded') return { hint: 'A limit was reached: wait until it resets (a minute, or midnight UTC for a daily cap).', to: '/settings/keys', label: 'See the limits in API keys' };
  return null;
}

/** The fix of a failure after its message: the hint, then the link. */
export function FixLink({ fix }: { fix: Fix | null }) {
  if (!fix) return null;
  return <>{fix.hint && <> {fix.hint}</>}{fix.to && <> <Link to={fix.to}>{fix.label}</Link></>}</>;
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const fix = error instanceof ApiError ? fixFor(error) : null;
  return <p className="error" role="alert">{message}<FixLink fix={fix} /></p>;
}

export function Field({ label, hint, ...input }: InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} {...input} />
      {hint && <small className="muted">{hint}</small>}
    </div>
  );
}

export function Select({ label, options, ...select }: SelectHTMLAttributes<HTMLSelectElement> & { label: string; options: Array<{ value: string; label: string }> }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select}>
        {options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
      </select>
    </div>
  );
}

export function Table({ caption, head, children }: { caption: string; head: string[]; children: ReactNode }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead><tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
      <tbody>{children}</tbody>
    </table>
  );
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <header className="card-head"><h2>{title}</h2>{actions}</header>
      {children}
    </section>
  );
}

export const when = (seconds: number | null) => (seconds ? new Date(seconds * 1000).toLocaleString() : '—');
export const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
export const credits = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 6 });
export const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : n < 1024 ** 3 ? `${(n / 1024 ** 2).toFixed(1)} MB` : `${(n / 1024 ** 3).toFixed(2)} GB`);

/** The mark of a pinned chat or project: a drawn pin (an emoji needs a font the machine may lack). */
export function PinnedMark() {
  return (
    <svg role="img" aria-label="pinned" className="pinned-mark" width="12" height="12" viewBox="0 0 16 16">
      <path fill="currentColor" d="M10.5 1.5 14.5 5.5 12.8 6.2 10.4 8.6 10.9 12.1 9.8 13.2 6.9 10.3 3.2 14 2 14 2 12.8 5.7 9.1 2.8 6.2 3.9 5.1 7.4 5.6 9.8 3.2Z" />
    </svg>
  );
}
