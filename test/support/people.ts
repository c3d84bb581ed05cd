/**
 * People for API tests: sign-up through /api with the CAPTCHA solved here (as the widget would), the
 * verification link read from the local SMTP server, and a session that sends its cookie and a
 * same-origin `Origin` header the way a browser does.
 */
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import type { SmtpSink } from './notification-sinks';
import { waitFor } from './notification-sinks';

export const PASSWORD = 'correct horse battery staple';

export interface Session {
  email: string;
  cookie: string;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  json(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

let counter = 0;
export function uniqueEmail(name: string): string {
  counter += 1;
  return `${name}.${Date.now().toString(36)}${counter}@example.com`;
}

export async function solvedCaptcha(base: string): Promise<string> {
  const challenge = (await (await fetch(`${base}/api/auth/captcha`)).json()) as Parameters<typeof solveChallenge>[0]['challenge'];
  const solution = await solveChallenge({ challenge, deriveKey });
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

export function sessionFor(base: string, email: string, cookie: string): Session {
  const doFetch = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { cookie, origin: base, ...(init.headers ?? {}) } });
  return {
    email,
    cookie,
    fetch: doFetch,
    async json(method, path, body) {
      const res = await doFetch(path, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
      return { status: res.status, body: await res.json().catch(() => null) };
    },
  };
}

export function cookieOf(res: Response): string {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('gw_session='));
  if (!set) throw new Error(`no session cookie in the response (${res.status})`);
  return set.split(';')[0];
}

export async function post(base: string, path: string, body: unknown, headers: Record<string, string> = { origin: base }): Promise<Response> {
  return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** The first link to `path` in the latest e-mail sent to `to`. */
export async function linkFromMail(smtp: SmtpSink, to: string, path: string): Promise<URL> {
  const mail = await waitFor(`an e-mail to ${to}`, () => [...smtp.messages].reverse().find((m) => m.to.includes(to) && m.text.includes(path)), 15_000);
  const match = new RegExp(`https?://\\S+${path.replace(/[?]/g, '\\?')}\\S*`).exec(mail.text);
  if (!match) throw new Error(`no ${path} link in: ${mail.text}`);
  return new URL(match[0]);
}

/** Signs up, follows the verification link, and returns the signed-in session. */
export async function signUp(base: string, smtp: SmtpSink, name: string): Promise<Session> {
  const email = uniqueEmail(name);
  const res = await post(base, '/api/auth/signup', { email, password: PASSWORD, name, altcha: await solvedCaptcha(base) });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const link = await linkFromMail(smtp, email, '/verify?token=');
  const verified = await post(base, '/api/auth/verify', { token: link.searchParams.get('token') });
  if (verified.status !== 200) throw new Error(`verification failed: ${verified.status} ${await verified.text()}`);
  return sessionFor(base, email, cookieOf(verified));
}

/** `owner` invites a new person as `role`; they sign up and accept. Returns their session (in the workspace). */
export async function invitedMember(base: string, smtp: SmtpSink, owner: Session, name: string, role: string): Promise<Session & { userId: string }> {
  const person = await signUp(base, smtp, name);
  const invite = await owner.json('POST', '/v1/organization/invites', { email: person.email, role });
  if (invite.status !== 201) throw new Error(`invite failed: ${invite.status} ${JSON.stringify(invite.body)}`);
  const link = await linkFromMail(smtp, person.email, '/invite?token=');
  const accepted = await person.json('POST', '/api/invites/accept', { token: link.searchParams.get('token') });
  if (accepted.status !== 200) throw new Error(`accept failed: ${accepted.status} ${JSON.stringify(accepted.body)}`);
  const me = await person.json('GET', '/api/me');
  return { ...person, userId: me.body.user.id };
}
