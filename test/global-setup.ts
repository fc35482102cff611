// Once per `vitest run`: a run folder for the services' logs and the secrets the tests created
// (test/support/test-logs.ts); at the end, every log is scanned for every secret, and the run
// fails if one shows. The report names the kind, the test that made it and the file, never the value.
// And src/ transpiled once, for the tests that run `chatgate` as a program (test/support/cli-build.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { TestProject } from 'vitest/node';

import { browserExecutable, usePackagedChromium } from './support/browser-path.js';
import { buildCli } from './support/cli-build.js';
import { pgliteTemplates } from './support/pglite-template.js';
import { createPostgresTemplate } from './support/postgres-template.js';
import { createScanner, type Leak, type RecordedSecret } from './support/secret-scan.js';
import { LOGS, SECRETS } from './support/test-logs.js';

const ROOT = path.join(os.tmpdir(), 'chatgate-test-logs');
const KEEP_RUNS_MS = 24 * 3600 * 1000;

function pruneOldRuns(root: string) {
  if (!fs.existsSync(root)) return;
  for (const name of fs.readdirSync(root)) {
    const dir = path.join(root, name);
    if (Date.now() - fs.statSync(dir).mtimeMs > KEEP_RUNS_MS) fs.rmSync(dir, { recursive: true, force: true });
  }
}

function readSecrets(dir: string): RecordedSecret[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedSecret);
}

export function scanRun(runDir: string): { secrets: number; files: number; leaks: Leak[] } {
  const secrets = readSecrets(path.join(runDir, SECRETS));
  const logDir = path.join(runDir, LOGS);
  const files = fs.existsSync(logDir) ? fs.readdirSync(logDir).map((f) => path.join(logDir, f)) : [];
  const scanner = createScanner(secrets);
  return { secrets: secrets.length, files: files.length, leaks: files.flatMap((f) => scanner.scanFile(f)) };
}

export default async function setup(project: TestProject) {
  pruneOldRuns(ROOT);
  // The packaged chromium (no system one, or CHATGATE_BROWSER=packaged) is unpacked once, here.
  if (usePackagedChromium()) console.log(`browser: ${await browserExecutable()} (@sparticuz/chromium)`);
  const runDir = path.join(ROOT, `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}`);
  fs.mkdirSync(runDir, { recursive: true, mode: 0o700 });
  project.provide('testLogRunDir', runDir);
  // Inside the project, so that the transpiled files find node_modules; one folder per run.
  const cliRoot = path.join('node_modules', '.cache', 'chatgate-test-cli');
  pruneOldRuns(cliRoot); // a run that did not reach its teardown leaves its folder
  const cliDir = path.join(cliRoot, path.basename(runDir));
  // And the databases a test starts from, made and migrated once: PGlite's as files
  // (test/support/pglite-template.ts), PostgreSQL's as a template database (postgres-template.ts).
  const [cli, pgTemplate, templates] = await Promise.all([
    buildCli(cliDir),
    process.env.DATABASE_URL ? createPostgresTemplate(process.env.DATABASE_URL) : null,
    process.env.DATABASE_URL ? null : pgliteTemplates(),
  ]);
  project.provide('chatgateCli', cli);
  project.onTestsRerun(async () => void (await buildCli(cliDir))); // watch mode: src/ as it is now
  project.provide('pgliteTemplates', templates);
  project.provide('postgresTemplate', pgTemplate?.name ?? null);

  return async () => {
    fs.rmSync(cliDir, { recursive: true, force: true });
    await pgTemplate?.drop();
    const { secrets, files, leaks } = scanRun(runDir);
    if (leaks.length === 0) {
      console.log(`test logs: ${runDir} (${files} files, checked for ${secrets} secrets: none found)`);
      return;
    }
    const lines = leaks.map(
      (l) =>
        `  a ${l.kind} (made in ${l.test}, fingerprint ${l.fingerprint}) appears ${l.count}× in ${path.relative(runDir, l.file)}`,
    );
    throw new Error(`secrets appear in the service logs of this run (${runDir}):\n${lines.join('\n')}`);
  };
}
