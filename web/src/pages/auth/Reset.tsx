import type { FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, useLocation } from '../../router';
import { ErrorNote, Field } from '../../ui';
import { AuthLayout } from './AuthLayout';

/** Asks for a reset link (no token yet) or sets the new password (the e-mail's link). */
export function Reset() {
  const token = useLocation().query.get('token');
  const forgot = useMutation({ mutationFn: api.forgot });
  const reset = useMutation({ mutationFn: (password: string) => api.reset(token ?? '', password) });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    if (token) reset.mutate(String(f.get('password')));
    else forgot.mutate(String(f.get('email')));
  };
  if (forgot.isSuccess) return <AuthLayout title="Check your e-mail"><p role="status">If an account uses that address, a reset link is on its way.</p></AuthLayout>;
  if (reset.isSuccess) return <AuthLayout title="Password changed"><p role="status">Every session was signed out. <Link to="/sign-in">Sign in</Link> with the new password.</p></AuthLayout>;
  return (
    <AuthLayout title={token ? 'Choose a new password' : 'Reset your password'}>
      <form onSubmit={submit}>
        {token
          ? <Field label="New password" name="password" type="password" autoComplete="new-password" minLength={10} required />
          : <Field label="E-mail" name="email" type="email" autoComplete="email" required />}
        <ErrorNote error={forgot.error ?? reset.error} />
        <button type="submit">{token ? 'Set password' : 'Send reset link'}</button>
      </form>
    </AuthLayout>
  );
}
