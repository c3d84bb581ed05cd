/**
 * E-mail over SMTP (nodemailer). The transport is built from a URL (`smtp://host:port`, `smtps://...`,
 * credentials in the URL) with short timeouts: a dead server must fail an attempt quickly so the caller's
 * retry policy, not a hung socket, decides when to try again.
 */
import nodemailer from 'nodemailer';

export interface EmailSettings {
  /** Absent: e-mail is not configured (sending fails, and the caller retries until it is). */
  smtpUrl: string | null;
  from: string;
}

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
  /** The same on every attempt to send this message: its `Message-ID` and `X-Gateway-Delivery-Id` (receivers drop repeats). */
  deliveryId?: string;
}

export class EmailNotConfiguredError extends Error {
  constructor() {
    super('SMTP is not configured: set SMTP_URL (e.g. smtp://127.0.0.1:2525) on the worker');
  }
}

export async function sendEmail(settings: EmailSettings, message: EmailMessage): Promise<{ messageId: string }> {
  if (!settings.smtpUrl) throw new EmailNotConfiguredError();
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  try {
    const info = await transport.sendMail({
      from: settings.from, to: message.to, subject: message.subject, text: message.text, html: message.html,
      ...(message.deliveryId ? { messageId: `<${message.deliveryId}@model-gateway>`, headers: { 'X-Gateway-Delivery-Id': message.deliveryId } } : {}),
    });
    return { messageId: info.messageId };
  } finally {
    transport.close();
  }
}
