import type { FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../../api';
import { Link, navigate, useLocation } from '../../router';
import { ErrorNote, Field } from '../../ui';
import { AuthLayout } from './AuthLayout';

export function SignIn() {
  const { query } = useLocation();
  const client = useQueryClient();
  const signIn = useMutation({
    mutationFn: api.signIn,
    onSuccess: async () => {
      await client.invalidateQueries();
      navigate(query.get('next') ?? '/settings/members');
    },
  });
  const resend = useMutation({ mutationFn: api.resend });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    signIn.mutate({ email: String(f.get('email')), password: String(f.get('password')) });
  };
  const unverified = signIn.error instanceof ApiError && signIn.error.code === 'email_not_verified';
  return (
    <AuthLayout title="Sign in">
      <form onSubmit={submit}>
        <Field label="E-mail" name="email" type="email" autoComplete="email" defaultValue={query.get('email') ?? ''} required />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <ErrorNote error={signIn.error} />
        {unverified && (
          <button type="button" className="link" onClick={() => resend.mutate(String(signIn.variables?.email))}>
            {resend.isSuccess ? 'Sent: check your e-mail' : 'Send the link again'}
          </button>
        )}
        <button type="submit" disabled={signIn.isPending}>{signIn.isPending ? 'Signing in…' : 'Sign in'}</button>
      </form>
      <p><Link to="/forgot">Forgot your password?</Link></p>
    </AuthLayout>
  );
}
