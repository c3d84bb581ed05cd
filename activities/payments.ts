/**
 * Automatic top-up activities: charge the saved card when the balance is below the threshold (once per
 * period, domain/auto-topup.ts), and tell the workspace's billing people when a top-up failed.
 */
import { log } from '../core/log';
import { sendEmail } from '../infra/notify/email';
import { autoTopUpFailureMail, chargeAutoTopUp, markAutoTopUpFailureNotified, type AutoTopUpOutcome } from '../domain/auto-topup';
import type { ActivityDeps } from './deps';

export function createPaymentActivities(deps: ActivityDeps) {
  const clock = deps.clock ?? (() => new Date());
  return {
    async runAutoTopUp(input: { workspaceId: string }): Promise<AutoTopUpOutcome | { outcome: 'not_configured' }> {
      if (!deps.payments) return { outcome: 'not_configured' };
      return chargeAutoTopUp(deps.db, deps.payments.stripe, deps.payments.config, { workspaceId: input.workspaceId, now: clock() });
    },

    /** Sends the failure e-mail once (throws on a failed send: the retry policy tries again). */
    async notifyAutoTopUpFailure(input: { paymentId: string }): Promise<{ sent: boolean }> {
      const base = deps.payments?.publicUrl;
      const mail = await autoTopUpFailureMail(deps.db, input.paymentId, base ? `${base}/settings/billing` : null);
      if (!mail) return { sent: false };
      const smtpUrl = deps.notifications?.smtpUrl ?? null;
      if (!smtpUrl || mail.to.length === 0) {
        log.warn({ paymentId: input.paymentId, to: mail.to }, `automatic top-up failure not e-mailed (${smtpUrl ? 'no owner or billing member' : 'no SMTP_URL configured'}):\n${mail.text}`);
      } else {
        await sendEmail({ smtpUrl, from: deps.notifications?.emailFrom ?? 'Model Gateway <alerts@localhost>' }, mail);
      }
      await markAutoTopUpFailureNotified(deps.db, input.paymentId);
      return { sent: Boolean(smtpUrl) && mail.to.length > 0 };
    },
  };
}
