// Outgoing mail for the portal (password reset links) through nodemailer's SMTP transport, when
// SMTP_URL is set. One transport per process; bounded timeouts so a stuck server costs no request.
import nodemailer from 'nodemailer';

export type Mail = { to: string; subject: string; text: string };
export type Mailer = { send(mail: Mail): Promise<void> };

export function createMailer(settings: { smtpUrl: string | null; smtpFrom: string | null }): Mailer | null {
  if (!settings.smtpUrl || !settings.smtpFrom) return null;
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  const from = settings.smtpFrom;
  return {
    async send(mail) {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
