// Where the services started by tests write their logs (one file each, pino JSON at info), and
// the record of every secret the tests create, both under the run folder of vitest's global setup
// (test/global-setup.ts), which scans the logs for the secrets when the run ends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import pino, { type DestinationStream } from 'pino';
import { expect, inject } from 'vitest';

import { MIN_SECRET_LENGTH } from './secret-scan.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testLogRunDir: string;
  }
}

export const LOGS = 'logs';
export const SECRETS = 'secrets';

/** The run folder of vitest's global setup; outside vitest (bench/portal.ts), one in the temporary folder. */
function runDir(): string {
  try {
    return inject('testLogRunDir');
  } catch {
    return path.join(os.tmpdir(), 'chatgate-bench-logs');
  }
}

/** The test file running now (for file names and reports), or "unknown" outside a test. */
function currentTest(): string {
  const file = process.env.VITEST ? expect.getState().testPath : undefined;
  return file ? path.basename(file).replace(/\.test\.ts$/, '') : 'unknown';
}

let files = 0;

/** A new log file for one service of the current test file. */
export function logFile(label: string): string {
  const dir = path.join(runDir(), LOGS);
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${currentTest()}-${label}-${process.pid}-${++files}.log`);
}

/**
 * A synchronous file destination: nothing is lost when a test process ends abruptly, and the
 * scan at the end of the run sees every line. With TEST_LOG_LEVEL set, lines also go to stdout.
 */
export function logDestination(label: string): { level: string; stream: DestinationStream; close(): void } {
  const file = pino.destination({ dest: logFile(label), sync: true });
  const consoleLevel = process.env.TEST_LOG_LEVEL;
  if (!consoleLevel || consoleLevel === 'silent') return { level: 'info', stream: file, close: () => file.end() };
  const level = pino.levels.values[consoleLevel]! < pino.levels.values.info! ? consoleLevel : 'info';
  const stream = pino.multistream([
    { level: 'info', stream: file },
    { level: consoleLevel as pino.Level, stream: process.stdout },
  ]);
  return { level, stream, close: () => file.end() };
}

const recorded = new Set<string>();

/** Remembers a secret a test created or handed to the service; the run fails if a log shows it. */
export function recordSecret(kind: string, value: unknown): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || recorded.has(value)) return;
  recorded.add(value);
  const dir = path.join(runDir(), SECRETS);
  fs.mkdirSync(dir, { recursive: true });
  // One file per test process: appends from different processes never interleave.
  fs.appendFileSync(
    path.join(dir, `${process.pid}.jsonl`),
    `${JSON.stringify({ kind, value, test: currentTest() })}\n`,
    { mode: 0o600 },
  );
}

/** Request fields that carry a secret to the service. */
const GIVEN: Record<string, string> = {
  accessToken: 'provider-access-token',
  appSecret: 'provider-app-secret',
  managementToken: 'management-token',
  password: 'password',
};
/** Answer fields that carry a secret the service made, recognised by their prefix. */
const MADE: Record<string, [RegExp, string]> = {
  key: [/^ak_(live|test)_/, 'api-key'],
  secret: [/^whsec_/, 'webhook-secret'],
};

/** Records the secrets in a request body (what a test gives) or an answer (what the service made). */
export function recordSecretsIn(body: unknown, side: 'request' | 'answer', depth = 0): void {
  if (body === null || typeof body !== 'object' || depth > 6) return;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (typeof v === 'string') {
      if (side === 'request' && GIVEN[k]) recordSecret(GIVEN[k], v);
      const made = MADE[k];
      if (side === 'answer' && made && made[0].test(v)) recordSecret(made[1], v);
    } else recordSecretsIn(v, side, depth + 1);
  }
}
