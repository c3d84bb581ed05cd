/**
 * The e-mails people get (verification, password reset, invitation), sent through the project's SMTP
 * settings. Without SMTP (local development), the message is written to the log instead, so the link
 * can still be followed.
 */
import { sendEmail, type EmailSettings } from '../infra/notify/email';
import { RateLimitError } from '../core/errors';
import type { Logger } from '../core/log';
import type { WindowCounters } from './rate-limits';

/**
 * E-mails one address may be sent per hour, by kind: verification (sign-up, resend) and password reset.
 * Counted whether or not the address has an account, so the limit's answer tells nothing either.
 */
export const ACCOUNT_MAIL_LIMITS = { verify: 5, reset: 5, windowMs: 3600_000 } as const;

export type AccountMailKind = 'verify' | 'reset';

/** Counts one e-mail of `kind` to `email` in the shared window counters; 429 `too_many_emails` past the limit. */
export async function countAccountMail(counters: WindowCounters, kind: AccountMailKind, email: string): Promise<void> {
  const hit = await counters.hit(`mail:${kind}:${email.toLowerCase()}`, ACCOUNT_MAIL_LIMITS.windowMs, ACCOUNT_MAIL_LIMITS[kind]);
  if (!hit.allowed) {
    throw new RateLimitError('Too many e-mails were sent to this address lately. Wait an hour and try again.', { retryAfterSeconds: Math.ceil(hit.resetMs / 1000), code: 'too_many_emails' });
  }
}

export interface AccountMailer {
  send(to: string, subject: string, text: string): Promise<void>;
}

export function accountMailer(settings: EmailSettings, log: Logger): AccountMailer {
  return {
    async send(to, subject, text) {
      if (!settings.smtpUrl) {
        log.info({ to, subject }, `e-mail not sent (no SMTP_URL configured):\n${text}`);
        return;
      }
      await sendEmail(settings, { to: [to], subject, text });
    },
  };
}

export const mailText = {
  verify: (link: string) => ({
    subject: 'Verify your e-mail address',
    text: `Welcome to the Model Gateway.\n\nConfirm your e-mail address by opening this link (valid for 24 hours):\n${link}\n\nIf you did not sign up, ignore this message.`,
  }),
  /** To the owner of an address someone tried to sign up with again: the answer did not say it was taken. */
  alreadyRegistered: (signInLink: string, resetLink: string) => ({
    subject: 'You already have an account',
    text: `Someone (perhaps you) tried to create a Model Gateway account with this e-mail address, which already has one.\n\nSign in here:\n${signInLink}\n\nForgot your password? Choose a new one here:\n${resetLink}\n\nIf it was not you, ignore this message; nothing changed.`,
  }),
  reset: (link: string) => ({
    subject: 'Reset your password',
    text: `Someone asked to reset the password of your Model Gateway account.\n\nChoose a new password here (valid for 1 hour):\n${link}\n\nIf it was not you, ignore this message; your password stays as it is.`,
  }),
  invite: (link: string, workspace: string, role: string, inviter: string) => ({
    subject: `${inviter} invited you to ${workspace}`,
    text: `${inviter} invited you to join the workspace "${workspace}" on the Model Gateway as ${role}.\n\nAccept the invitation here (valid for 7 days):\n${link}`,
  }),
};
