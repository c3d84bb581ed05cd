import type { ReactNode } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, navigate, useLocation } from '../../router';
import { useCan, useMe } from '../../session';
import { ThemeSwitch } from '../../theme';
import { WorkspaceSwitcher } from './WorkspaceSwitcher';

/** Settings pages and the permission each needs; a page the role may not see is not in the menu. */
export const SETTINGS_PAGES: Array<{ path: string; label: string; permission: string }> = [
  { path: '/settings/members', label: 'Members', permission: 'members.read' },
  { path: '/settings/keys', label: 'API keys', permission: 'api_keys.read' },
  { path: '/settings/billing', label: 'Billing', permission: 'billing.read' },
  { path: '/settings/requests', label: 'Requests', permission: 'requests.read' },
  { path: '/settings/batches', label: 'Batches', permission: 'jobs.read' },
  { path: '/settings/alerts', label: 'Budget alerts', permission: 'budget_alerts.manage' },
  { path: '/settings/fallbacks', label: 'Fallback chains', permission: 'members.read' },
  { path: '/settings/models', label: 'Models', permission: 'members.read' },
  { path: '/settings/provider-keys', label: 'Provider keys', permission: 'provider_keys.manage' },
];

export function SettingsLayout({ children, wide }: { children: ReactNode; wide?: boolean }) {
  const me = useMe().data!;
  const can = useCan();
  const { path } = useLocation();
  const client = useQueryClient();
  const signOut = useMutation({
    mutationFn: api.signOut,
    onSuccess: () => {
      client.clear();
      navigate('/sign-in');
    },
  });
  return (
    <div className="shell">
      <header className="topbar">
        <span className="brand">Model Gateway</span>
        <WorkspaceSwitcher />
        <span className="muted who">{me.user?.email} · {me.workspace?.role}</span>
        <ThemeSwitch />
        <button type="button" className="secondary" onClick={() => signOut.mutate()}>Sign out</button>
      </header>
      <div className="body">
        <nav className="sidebar" aria-label="Settings">
          <ul>
            <li><Link to="/playground" aria-current={path.startsWith('/playground') ? 'page' : undefined}>Playground</Link></li>
            {SETTINGS_PAGES.filter((p) => can(p.permission)).map((p) => (
              <li key={p.path}><Link to={p.path} aria-current={path === p.path ? 'page' : undefined}>{p.label}</Link></li>
            ))}
          </ul>
        </nav>
        <main className={wide ? 'content wide' : 'content'}>{children}</main>
      </div>
    </div>
  );
}
