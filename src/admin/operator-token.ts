// The operator token of an embedded installation (decision 0065): with no ADMIN_TOKEN set, the first
// `chatgate serve` on a data folder makes one and keeps it in DATA_DIR/admin-token (0600, beside
// the data and the embedded encryption key), so the operator API works from the first start; later
// starts read it back. ADMIN_TOKEN, when set, wins and the file is neither read nor written. With
// DATABASE_URL (PostgreSQL) nothing is made: several processes on several hosts share that database
// and no data folder, so the token is a setting like ENCRYPTION_KEY and the operator API stays off
// until ADMIN_TOKEN is set.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const operatorTokenFile = (dataDir: string) => path.join(dataDir, 'admin-token');

/** The token in the data folder, made now (`created`) when there is none yet. */
export function dataDirOperatorToken(dataDir: string): { token: string; file: string; created: boolean } {
  const file = operatorTokenFile(dataDir);
  const kept = readOperatorToken(dataDir);
  if (kept !== null) return { token: kept, file, created: false };
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = crypto.randomBytes(24).toString('hex');
  // `wx`: never over a file another process wrote meanwhile (the data folder's lock comes later).
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return { token, file, created: true };
}

/** The kept token, or null when the file is absent or empty. */
export function readOperatorToken(dataDir: string): string | null {
  try {
    const token = fs.readFileSync(operatorTokenFile(dataDir), 'utf8').trim();
    return token === '' ? null : token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** What the first start prints once, to the terminal (stderr), never to the log. */
export function firstStartHelp(address: string, file: string, token: string): string {
  return [
    '',
    'chatgate: first start on this data folder. The operator token was made and kept in',
    `  ${file}   (mode 0600; shown this once, read it from the file later):`,
    `  ${token}`,
    'Use it with the operator API (customers, chat accounts, API keys) and `chatgate admin`:',
    `  curl -H "Authorization: Bearer $(cat ${file})" ${address}/admin/customers`,
    `  export ADMIN_TOKEN=$(cat ${file})`,
    `API reference: ${address}/docs    Customer portal: ${address}/portal`,
    'Set ADMIN_TOKEN yourself to use another token (it wins over the file).',
    '',
  ].join('\n');
}

/** What every later start prints: where the token is, never the token. */
export function laterStartHelp(address: string, file: string): string {
  return `chatgate: the operator token is in ${file} (ADMIN_TOKEN is not set). API reference: ${address}/docs   Customer portal: ${address}/portal`;
}
