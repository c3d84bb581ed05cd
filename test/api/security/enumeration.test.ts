/**
 * No account enumeration: sign-up with a taken address and forgot-password answer exactly as for a new
 * one, in similar time (the password is hashed either way; e-mail goes out after the answer, so a slow mail
 * relay shows in neither), and the e-mail tells the address's owner. Verification and reset e-mails are
 * limited per address, counted alike whether or not it has an account.
 */
import { expect } from 'chai';
import { ACCOUNT_MAIL_LIMITS } from '../../../domain/account-mail';
import { createUser } from '../../../domain/accounts';
import { freePort } from '../../../stack/processes';
import { startTestGateway, type TestGateway } from '../../support/gateway';
import { SmtpSink, waitFor } from '../../support/notification-sinks';
import { PASSWORD, linkFromMail, post, solvedCaptcha, uniqueEmail } from '../../support/people';

/** Each e-mail takes the relay this long to accept: an answer that waited for it would show it. */
const SLOW_RELAY_MS = 1500;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('security: no account enumeration', function () {
  this.timeout(300_000);
  let gateway: TestGateway;
  let smtp: SmtpSink;
  before(async function () {
    this.timeout(180_000);
    smtp = new SmtpSink(await freePort(), { delayMs: SLOW_RELAY_MS });
    await smtp.start();
    gateway = await startTestGateway({ worker: false, env: { SMTP_URL: smtp.url, CAPTCHA_MAX_COUNTER: '400' } });
  });
  after(async () => {
    await gateway?.stop();
    await smtp?.stop();
  });

  const existing = (name: string, verified = true) =>
    createUser(gateway.runtime.db, { email: uniqueEmail(name), password: PASSWORD, verified, actor: 'test' });
  /** A sign-up's answer and how long it took (the CAPTCHA is solved before the clock starts). */
  async function timedSignUp(email: string): Promise<{ status: number; body: unknown; ms: number }> {
    const altcha = await solvedCaptcha(gateway.url);
    const started = performance.now();
    const res = await post(gateway.url, '/api/auth/signup', { email, password: PASSWORD, name: 'Sam', altcha });
    const body = await res.json();
    return { status: res.status, body, ms: performance.now() - started };
  }
  async function timedForgot(email: string): Promise<{ status: number; body: unknown; ms: number }> {
    const started = performance.now();
    const res = await post(gateway.url, '/api/auth/forgot', { email });
    const body = await res.json();
    return { status: res.status, body, ms: performance.now() - started };
  }
  const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));

  it('sign-up: a taken address gets the answer a new one gets, in similar time; its owner is told by e-mail', async () => {
    const taken = await Promise.all([1, 2, 3, 4, 5].map(() => existing('taken')));
    const rounds: Array<{ fresh: number; taken: number }> = [];
    for (const user of taken) {
      const freshEmail = uniqueEmail('fresh');
      const fresh = await timedSignUp(freshEmail);
      const again = await timedSignUp(user.email);
      expect(fresh.status).to.equal(201);
      expect(again.status).to.equal(201);
      const shape = (body: unknown, email: string) => ({ ...(body as Record<string, unknown>), email: (body as { email: string }).email.replace(email, '<address>') });
      expect(shape(again.body, user.email)).to.deep.equal(shape(fresh.body, freshEmail));
      rounds.push({ fresh: fresh.ms, taken: again.ms });
    }
    // The taken address costs the same password hashing as a new account: far from the instant answer a
    // skipped hash would give. A coarse bound, for a loaded machine; bench/ is where time is measured.
    const ratio = median(rounds.map((r) => r.taken)) / median(rounds.map((r) => r.fresh));
    expect(ratio, JSON.stringify(rounds)).to.be.within(0.4, 2.5);
    // Neither answer waited for the slow relay.
    expect(Math.max(...rounds.flatMap((r) => [r.fresh, r.taken])), JSON.stringify(rounds)).to.be.below(SLOW_RELAY_MS);

    const owner = taken[0];
    const notice = await waitFor('the notice to the owner', () => mailsTo(owner.email)[0], 15_000);
    expect(notice.subject).to.equal('You already have an account');
    expect(notice.text).to.include(`${gateway.url}/sign-in`).and.include(`${gateway.url}/forgot`);
    expect(notice.text).to.not.include('/verify?token=');
    expect(await gateway.runtime.db('users').whereRaw('lower(email) = ?', [owner.email])).to.have.length(1);
  });

  it('sign-up of an address never confirmed sends its owner a fresh verification link, and the same answer', async () => {
    const unconfirmed = await existing('unconfirmed', false);
    const again = await timedSignUp(unconfirmed.email);
    expect(again.status).to.equal(201);
    expect(again.body).to.deep.equal({ object: 'user', email: unconfirmed.email, name: 'Sam', email_verified: false });
    const link = await linkFromMail(smtp, unconfirmed.email, '/verify?token=');
    expect((await post(gateway.url, '/api/auth/verify', { token: link.searchParams.get('token') })).status).to.equal(200);
  });

  it('forgot-password: a known and an unknown address get the same answer in similar time; only the owner gets mail', async () => {
    const known = await Promise.all([1, 2, 3, 4, 5].map(() => existing('known')));
    const rounds: Array<{ known: number; unknown: number }> = [];
    for (const user of known) {
      const unknownEmail = uniqueEmail('nobody');
      const a = await timedForgot(user.email);
      const b = await timedForgot(unknownEmail);
      expect([a.status, b.status]).to.deep.equal([202, 202]);
      expect(a.body).to.deep.equal(b.body);
      rounds.push({ known: a.ms, unknown: b.ms });
      await waitFor('the reset e-mail', () => mailsTo(user.email).find((m) => m.text.includes('/reset?token=')), 15_000);
      expect(mailsTo(unknownEmail)).to.deep.equal([]);
    }
    // A known address's answer does not wait for its e-mail (the relay takes 1.5 s per message).
    const gap = median(rounds.map((r) => r.known)) - median(rounds.map((r) => r.unknown));
    expect(gap, JSON.stringify(rounds)).to.be.below(SLOW_RELAY_MS / 3);
  });

  it('limits verification and reset e-mails per address, answering alike for known and unknown addresses', async () => {
    const known = await existing('limited', false);
    const unknown = uniqueEmail('limited-nobody');
    for (const [path, limit] of [['/api/auth/resend', ACCOUNT_MAIL_LIMITS.verify], ['/api/auth/forgot', ACCOUNT_MAIL_LIMITS.reset]] as const) {
      for (const email of [known.email, unknown]) {
        const statuses: number[] = [];
        for (let i = 0; i <= limit; i += 1) statuses.push((await post(gateway.url, path, { email })).status);
        expect(statuses, `${path} ${email}`).to.deep.equal([...Array(limit).fill(202), 429]);
        const refused = await post(gateway.url, path, { email: email.toUpperCase() });
        expect(refused.status, 'the address is counted whatever its case').to.equal(429);
        expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
        expect(((await refused.json()) as { error: { code: string; type: string } }).error).to.include({ type: 'rate_limit_error', code: 'too_many_emails' });
      }
    }
    // Sign-up counts a verification e-mail too: the limit holds there, for a taken address as for a new one.
    const signUp = await timedSignUp(known.email);
    expect(signUp.status).to.equal(429);
    const sent = mailsTo(known.email).length;
    expect(sent, 'at most the limit of each kind went out').to.be.at.most(ACCOUNT_MAIL_LIMITS.verify + ACCOUNT_MAIL_LIMITS.reset);
  });
});
