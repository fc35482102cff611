// LOG_FORMAT=pretty: pino's JSON lines turned into one readable line each, for a developer's
// terminal — `12:04:05.123 WARN  webhook delivery failed, will retry  deliveryId=… attempt=2`.
// Production keeps JSON (the default). Written here rather than with pino-pretty: ~40 lines, no
// dependency, no worker thread, and the same redaction (it formats what pino already redacted).
import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '36', 30: '32', 40: '33', 50: '31', 60: '35' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/** One JSON log line as text (no trailing newline); not JSON: the line as it came. */
export function formatLine(line: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const fields = Object.entries(entry)
    .filter(([k, v]) => !SKIP.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"=]/.test(v) ? v : JSON.stringify(v)}`);
  const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
  const head = `${time} ${color ? `\x1b[${COLORS[level] ?? '0'}m${name}\x1b[0m` : name} ${String(entry.msg ?? '')}`;
  return [head + (fields.length > 0 ? `  ${fields.join(' ')}` : ''), ...(err?.stack ? [err.stack] : [])].join('\n');
}

/** A destination for pino that writes formatted lines to `out` (colours when it is a terminal). */
export function prettyStream(out: { write(text: string): unknown; isTTY?: boolean } = process.stdout): Writable {
  const color = out.isTTY === true;
  let rest = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      const text = lines.filter((l) => l !== '').map((l) => `${formatLine(l, color)}\n`);
      if (text.length > 0) out.write(text.join(''));
      done();
    },
    final(done) {
      if (rest !== '') out.write(`${formatLine(rest, color)}\n`);
      done();
    },
  });
}
