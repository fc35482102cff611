// Before `npm start` and `npm test` (their pre-scripts): checks in well under a second what the
// command needs, and says in ONE line what is missing and the one command that fixes it, before any
// build. Plain JavaScript that any Node.js runs, so that it can speak on the wrong one.
//
//   node scripts/preflight.mjs start   the runtime; then builds dist/ only when the sources changed
//   node scripts/preflight.mjs test    the runtime and a browser for the portal's tests
//
// The runtime: npm scripts put node_modules/.bin first on PATH, and the devDependency `node` (the
// npm registry's official Node.js 24 binary) puts its `node` there, so every script, vitest and its
// workers, and `#!/usr/bin/env node` programs run on 24 whatever the machine has.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MIN = [22, 19];

function fail(line) {
  console.error(`chatgate: ${line}`);
  process.exit(1);
}

export function runtimeProblem(version = process.versions.node) {
  const [major, minor] = version.split('.').map(Number);
  if (major > MIN[0] || (major === MIN[0] && minor >= MIN[1])) return null;
  return `Node.js ${MIN.join('.')} or later is needed (this is ${version}, ${process.execPath}); fix: npm rebuild node   (installs Node.js 24 from the npm registry into node_modules/.bin)`;
}

// Sources whose change needs a new build: everything tsc and the copy step read.
const BUILD_INPUTS = ['src', 'tsconfig.json', 'package-lock.json'];
const STAMP = path.join(ROOT, 'dist', '.build-inputs');

function* files(p) {
  const stat = fs.statSync(p, { throwIfNoEntry: false });
  if (!stat) return;
  if (!stat.isDirectory()) {
    yield p;
    return;
  }
  for (const name of fs.readdirSync(p).sort()) yield* files(path.join(p, name));
}

/** One hash over the paths and contents of the build's inputs (about 50 ms for the whole tree). */
export function buildInputsHash(root = ROOT) {
  const hash = crypto.createHash('sha256');
  for (const input of BUILD_INPUTS)
    for (const file of files(path.join(root, input))) {
      if (file.endsWith('.test.ts')) continue; // tests are not built
      hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
    }
  return hash.digest('hex');
}

function buildIfChanged() {
  const hash = buildInputsHash();
  const built = fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8').trim();
  if (built === hash && fs.existsSync(path.join(ROOT, 'dist/src/cli.js'))) {
    console.error('chatgate: dist/ is up to date with src/ (no build)');
    return;
  }
  console.error('chatgate: building dist/ (src/ changed since the last build)');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch {
    process.exit(1);
  }
  fs.writeFileSync(STAMP, `${hash}\n`);
}

/** The browser the portal's tests use (test/support/browser.ts asks the same question). */
function browserProblem() {
  if (process.env.CHATGATE_BROWSER === 'packaged' || !fs.existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')) {
    if (!fs.existsSync(path.join(ROOT, 'node_modules/@sparticuz/chromium/bin/chromium.br')))
      return 'no Chromium for the portal tests (no /usr/bin/chromium and no node_modules/@sparticuz/chromium); fix: npm ci';
  }
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2];
  const problem = runtimeProblem() ?? (what === 'test' ? browserProblem() : null);
  if (problem) fail(problem);
  if (what === 'start') buildIfChanged();
}
