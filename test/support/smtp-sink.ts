// A local SMTP server on loopback (the `smtp-server` package) that keeps every mail it receives:
// the service's password reset mails are sent to it by nodemailer over real SMTP.
import type { AddressInfo } from 'node:net';

import { SMTPServer } from 'smtp-server';

export type SunkMail = { from: string; to: string[]; raw: string; text: string };

/** Quoted-printable soft line breaks and escapes undone: enough to read a link from the body. */
function decodeBody(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** `greetingDelayMs`: the server greets each connection only after that long (a slow mail server). */
export async function startSmtpSink(options: { greetingDelayMs?: number } = {}) {
  const mails: SunkMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no STARTTLS (a self-signed certificate nodemailer would refuse), no AUTH.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onConnect(_session, callback) {
      if (options.greetingDelayMs) setTimeout(() => callback(), options.greetingDelayMs);
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, text: decodeBody(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The reset link's path (/portal/password-reset/<token>) in the last mail to `to`, or undefined. */
    resetPath(to: string): string | undefined {
      const mail = mails.filter((m) => m.to.includes(to)).at(-1);
      const m = mail && /https?:\/\/[^\s/]+(\/portal\/password-reset\/[A-Za-z0-9_-]+)/.exec(mail.text);
      return m?.[1];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
