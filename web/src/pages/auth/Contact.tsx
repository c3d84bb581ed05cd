import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../api';
import { ErrorNote, Field } from '../../ui';
import { AuthLayout } from './AuthLayout';
import { Captcha } from './Captcha';

export function Contact() {
  const [captcha, setCaptcha] = useState<string | null>(null);
  const send = useMutation({ mutationFn: api.contact });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    send.mutate({ email: String(f.get('email')), message: String(f.get('message')), altcha: captcha ?? '' });
  };
  if (send.isSuccess) return <AuthLayout title="Thank you"><p role="status">We received your message.</p></AuthLayout>;
  return (
    <AuthLayout title="Contact us">
      <form onSubmit={submit}>
        <Field label="Your e-mail" name="email" type="email" required />
        <div className="field"><label htmlFor="message">Message</label><textarea id="message" name="message" rows={5} required maxLength={5000} /></div>
        <Captcha onSolved={setCaptcha} />
        <ErrorNote error={send.error} />
        <button type="submit" disabled={!captcha || send.isPending}>Send</button>
      </form>
    </AuthLayout>
  );
}
