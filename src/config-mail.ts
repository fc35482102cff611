// The outgoing mail settings (decision 0051): SMTP_URL and SMTP_FROM. Without SMTP_URL the
// service sends no mail, and the portal offers no password reset by email.
import type { Readers } from './config-readers.js';

export type MailSettings = {
  /** smtp://[user:password@]host[:port] (STARTTLS when the server offers it) or smtps:// (TLS from the start); null: no mail. */
  smtpUrl: string | null;
  /** The sender of every mail (`ChatGate <no-reply@example.com>` or an address); required with SMTP_URL. */
  smtpFrom: string | null;
};

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;

export function readMailSettings({ str }: Readers, problems: string[]): MailSettings {
  const smtpUrl = str('SMTP_URL');
  const smtpFrom = str('SMTP_FROM');
  if (smtpUrl !== null) {
    let ok = false;
    try {
      const u = new URL(smtpUrl);
      ok = (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    // The URL may carry a password: it is never repeated in the problem.
    if (!ok) problems.push('SMTP_URL must look like smtp://[user:password@]host[:port] or smtps://…');
    if (smtpFrom === null) problems.push('SMTP_FROM is required with SMTP_URL (the sender address of portal mail)');
  }
  if (smtpFrom !== null) {
    const address = /<([^>]*)>\s*$/.exec(smtpFrom)?.[1] ?? smtpFrom;
    if (!ADDRESS.test(address) || smtpFrom.length > 320 || /[\r\n]/.test(smtpFrom))
      problems.push('SMTP_FROM must be an email address, optionally with a name: ChatGate <no-reply@example.com>');
  }
  return { smtpUrl, smtpFrom };
}
