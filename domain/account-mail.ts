/**
 * The e-mails people get (verification, password reset, invitation), sent through the project's SMTP
 * settings. Without SMTP (local development), the message is written to the log instead, so the link
 * can still be followed.
 */
import { sendEmail, type EmailSettings } from '../infra/notify/email';
import type { Logger } from '../core/log';

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
  reset: (link: string) => ({
    subject: 'Reset your password',
    text: `Someone asked to reset the password of your Model Gateway account.\n\nChoose a new password here (valid for 1 hour):\n${link}\n\nIf it was not you, ignore this message; your password stays as it is.`,
  }),
  invite: (link: string, workspace: string, role: string, inviter: string) => ({
    subject: `${inviter} invited you to ${workspace}`,
    text: `${inviter} invited you to join the workspace "${workspace}" on the Model Gateway as ${role}.\n\nAccept the invitation here (valid for 7 days):\n${link}`,
  }),
};
