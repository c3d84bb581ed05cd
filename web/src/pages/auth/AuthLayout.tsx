import type { ReactNode } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { Link } from '../../router';

export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  // No way to an account where sign-up is closed.
  const policy = useQuery({ queryKey: ['signup-policy'], queryFn: api.signupPolicy });
  const canSignUp = policy.data?.mode !== 'closed';
  return (
    <main className="auth">
      <div className="brand">Model Gateway</div>
      <div className="card auth-card">
        <h1>{title}</h1>
        {children}
      </div>
      <nav className="auth-links" aria-label="Account">{footer ?? <><Link to="/sign-in">Sign in</Link>{canSignUp && <> · <Link to="/sign-up">Create an account</Link></>}</>}</nav>
    </main>
  );
}
