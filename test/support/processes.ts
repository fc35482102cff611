// `chatgate` as a real child process (from source, transpiled once per run: cli-build.ts), its log (pino JSON on stdout, and
// stderr) written to a log file of the run like the in-process services', and its lines readable.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

import { chatgateArgs } from './cli-build.js';
import { logFile, recordSecret } from './test-logs.js';

export type LogLine = { msg?: string; level?: number; [k: string]: unknown };

export type ChatgateProcess = {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  lines: LogLine[];
  /** The first log line (so far or to come) that `match` accepts; rejects on exit or after timeoutMs. */
  waitForLine(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
};

export function spawnChatgate(args: string[], env: Record<string, string>, label: string): ChatgateProcess {
  for (const name of ['ADMIN_TOKEN', 'ENCRYPTION_KEY', 'PROVIDER_APP_SECRET', 'PROVIDER_VERIFY_TOKEN'])
    recordSecret(name.toLowerCase().replaceAll('_', '-'), env[name]);
  const child = spawn(process.execPath, chatgateArgs(...args), {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = fs.createWriteStream(logFile(label));
  child.stderr!.pipe(out, { end: false });
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  readline.createInterface({ input: child.stdout! }).on('line', (text) => {
    out.write(`${text}\n`);
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      lines.push({ msg: text });
    }
    for (const w of waiters) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  void exited.then(() => setTimeout(() => out.end(), 100));
  return {
    child,
    exited,
    lines,
    waitForLine(match, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${label}: no matching log line within ${timeoutMs} ms`));
        }, timeoutMs);
        function check() {
          const line = lines.find(match);
          if (line || child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            if (line) resolve(line);
            else reject(new Error(`${label} exited (${child.exitCode ?? child.signalCode}) before the line came`));
          }
        }
        waiters.add(check);
        check();
      });
    },
  };
}
