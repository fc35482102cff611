// Argument handling shared by every `chatgate` command: `--help` anywhere prints the command's
// help and does nothing else; a bad flag or a missing value is one line naming the flag and the
// command's usage (exit 2, no stack trace).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A mistake on the command line: printed as one line, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/** The option a node:util parseArgs error names (`--name`, `-x`), if any. */
function flagOf(message: string): string | undefined {
  return /'(-{1,2}[^' ]+)/.exec(message)?.[1];
}

/**
 * parseArgs in strict mode, its errors turned into one line:
 * `<command>: unknown option --foo (usage: <usage>)`.
 */
export function parseCommandArgs<T extends ParseArgsConfig['options']>(
  args: string[],
  options: T,
  command: string,
  usage: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    const e = err as { code?: string; message: string };
    const flag = flagOf(e.message);
    let what: string;
    switch (e.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        what = `unknown option ${flag}`;
        break;
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        what = /does not take an argument/.test(e.message)
          ? `option ${flag} takes no value`
          : `option ${flag} needs a value`;
        break;
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        what = `unexpected argument ${/'([^']*)'/.exec(e.message)?.[1] ?? ''}`.trimEnd();
        break;
      default:
        throw err;
    }
    throw new UsageError(`${command}: ${what} (usage: ${usage})`);
  }
}

/** The version in the project's package.json (found upwards from this file, in src/ or dist/src/). */
export function chatgateVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'chatgate') return pkg.version ?? 'unknown';
    }
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}
