import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, useLocation } from '../../router';
import { ErrorNote, Field, Loading } from '../../ui';
import { AuthLayout } from './AuthLayout';
import { Captcha } from './Captcha';

/** Sign-up as the deployment allows it: open, by invitation (the invitation link's token rides along), or closed. */
export function SignUp() {
  const { query } = useLocation();
  const inviteToken = query.get('invite') ?? undefined;
  const policy = useQuery({ queryKey: ['signup-policy'], queryFn: api.signupPolicy });
  const [captcha, setCaptcha] = useState<string | null>(null);
  const signUp = useMutation({ mutationFn: api.signUp });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    signUp.mutate({ email: String(f.get('email')), name: String(f.get('name')), password: String(f.get('password')), altcha: captcha ?? '', invite_token: inviteToken });
  };
  if (signUp.isSuccess) {
    return (
      <AuthLayout title="Check your e-mail">
        <p role="status">We sent a link to <strong>{signUp.data.email}</strong>. Open it to confirm your address and sign in.</p>
      </AuthLayout>
    );
  }
  if (policy.isPending) return <AuthLayout title="Create your account"><Loading what="sign-up" /></AuthLayout>;
  const mode = policy.data?.mode ?? 'open';
  if (mode === 'closed' || (mode === 'invite-only' && !inviteToken)) {
    return (
      <AuthLayout title="Create your account">
        <p role="status">{mode === 'closed'
          ? 'Sign-up is closed here: ask the administrator of this gateway for an account.'
          : 'Sign-up is by invitation: open the link in the invitation you received, and create your account from there.'}</p>
        <p><Link to="/sign-in">Sign in</Link> if you already have an account.</p>
      </AuthLayout>
    );
  }
  const domains = policy.data?.allowed_domains ?? [];
  return (
    <AuthLayout title="Create your account">
      <form onSubmit={submit}>
        <Field label="Name" name="name" autoComplete="name" required />
        <Field label="E-mail" name="email" type="email" autoComplete="email" defaultValue={query.get('email') ?? ''} required
          hint={domains.length ? `An address at ${domains.join(', ')}.` : undefined} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" minLength={10} required hint="At least 10 characters." />
        <Captcha onSolved={setCaptcha} />
        <ErrorNote error={policy.error ?? signUp.error} />
        <button type="submit" disabled={!captcha || signUp.isPending}>{signUp.isPending ? 'Creating…' : 'Create account'}</button>
      </form>
    </AuthLayout>
  );
}
