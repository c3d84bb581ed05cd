import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../api';
import { ErrorNote, Field } from '../../ui';
import { AuthLayout } from './AuthLayout';
import { Captcha } from './Captcha';

export function SignUp() {
  const [captcha, setCaptcha] = useState<string | null>(null);
  const signUp = useMutation({ mutationFn: api.signUp });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    signUp.mutate({ email: String(f.get('email')), name: String(f.get('name')), password: String(f.get('password')), altcha: captcha ?? '' });
  };
  if (signUp.isSuccess) {
    return (
      <AuthLayout title="Check your e-mail">
        <p role="status">We sent a link to <strong>{signUp.data.email}</strong>. Open it to confirm your address and sign in.</p>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout title="Create your account">
      <form onSubmit={submit}>
        <Field label="Name" name="name" autoComplete="name" required />
        <Field label="E-mail" name="email" type="email" autoComplete="email" required />
        <Field label="Password" name="password" type="password" autoComplete="new-password" minLength={10} required hint="At least 10 characters." />
        <Captcha onSolved={setCaptcha} />
        <ErrorNote error={signUp.error} />
        <button type="submit" disabled={!captcha || signUp.isPending}>{signUp.isPending ? 'Creating…' : 'Create account'}</button>
      </form>
    </AuthLayout>
  );
}
