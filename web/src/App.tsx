import { useEffect, type ComponentType } from 'react';
import { navigate, useLocation } from './router';
import { useCan, useMe } from './session';
import { ErrorNote, Loading } from './ui';
import { SignIn } from './pages/auth/SignIn';
import { SignUp } from './pages/auth/SignUp';
import { Verify } from './pages/auth/Verify';
import { Reset } from './pages/auth/Reset';
import { Invite } from './pages/auth/Invite';
import { Contact } from './pages/auth/Contact';
import { SETTINGS_PAGES, SettingsLayout } from './pages/settings/SettingsLayout';
import { Members } from './pages/settings/Members';
import { Keys } from './pages/settings/Keys';
import { Billing } from './pages/settings/Billing';
import { BudgetAlerts } from './pages/settings/BudgetAlerts';
import { FallbackChains } from './pages/settings/FallbackChains';
import { Models } from './pages/settings/Models';
import { Requests } from './pages/settings/Requests';
import { ProviderKeys } from './pages/settings/ProviderKeys';
import { Batches } from './pages/settings/Batches';
import { Playground } from './pages/playground/Playground';

const PUBLIC: Record<string, ComponentType> = {
  '/sign-in': SignIn, '/sign-up': SignUp, '/verify': Verify, '/reset': Reset, '/forgot': Reset, '/invite': Invite, '/contact': Contact,
};

const SETTINGS: Record<string, ComponentType> = {
  '/settings/members': Members, '/settings/keys': Keys, '/settings/billing': Billing,
  '/settings/requests': Requests, '/settings/batches': Batches, '/settings/alerts': BudgetAlerts, '/settings/fallbacks': FallbackChains, '/settings/models': Models,
  '/settings/provider-keys': ProviderKeys,
};

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to), [to]);
  return null;
}

export function App() {
  const { path } = useLocation();
  const me = useMe();
  const can = useCan();
  const Public = PUBLIC[path];
  if (Public) return <Public />;
  if (me.isPending) return <main className="auth"><Loading what="your account" /></main>;
  if (me.isError) return <main className="auth"><ErrorNote error={me.error} /></main>;
  if (!me.data.user) return <Redirect to={`/sign-in?next=${encodeURIComponent(path)}`} />;
  if (path === '/playground' || path.startsWith('/playground/')) return <SettingsLayout wide><Playground /></SettingsLayout>;
  const page = SETTINGS_PAGES.find((p) => p.path === path);
  if (!page) return <Redirect to="/settings/members" />;
  const Page = SETTINGS[path];
  return (
    <SettingsLayout>
      <h1>{page.label}</h1>
      {can(page.permission) ? <Page /> : <p className="error" role="alert">Your role may not see this page.</p>}
    </SettingsLayout>
  );
}
