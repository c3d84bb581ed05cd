import type { ReactNode } from 'react';
import { Link } from '../../router';

export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <main className="auth">
      <div className="brand">Model Gateway</div>
      <div className="card auth-card">
        <h1>{title}</h1>
        {children}
      </div>
      <nav className="auth-links" aria-label="Account">{footer ?? <><Link to="/sign-in">Sign in</Link> · <Link to="/sign-up">Create an account</Link></>}</nav>
    </main>
  );
}
