// Every setting the service reads is documented: the service's in docs/configuration.md (the table
// the README's reference moved to, issue #36), the provider emulator's in docs/emulator.md.
import fs from 'node:fs';

import { expect, it } from 'vitest';

/** The environment variables src/config*.ts reads (its readers take the name as a literal). */
function settingsRead(): Set<string> {
  const names = new Set<string>();
  for (const file of fs.readdirSync('src').filter((f) => /^config.*\.ts$/.test(f) && !f.endsWith('.test.ts'))) {
    const code = fs.readFileSync(`src/${file}`, 'utf8');
    for (const m of code.matchAll(/\b(?:str|int|bool|num|url)\(\s*'([A-Z][A-Z0-9_]+)'/g)) names.add(m[1]!);
    for (const m of code.matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]!);
  }
  return names;
}

it('documents every setting: the service in docs/configuration.md, the emulator in docs/emulator.md', () => {
  const names = [...settingsRead()];
  expect(names.length).toBeGreaterThan(60); // the readers were found
  const configuration = fs.readFileSync('docs/configuration.md', 'utf8');
  const emulator = fs.readFileSync('docs/emulator.md', 'utf8');
  const undocumented = names.filter((n) =>
    n.startsWith('EMULATOR_') ? !emulator.includes(`\`${n}\``) : !configuration.includes(`\`${n}\``),
  );
  expect(undocumented).toEqual([]);
  for (const name of ['ADMIN_TOKEN', 'DATA_DIR', 'WORKER_ACTIVITY_LOG_MS']) expect(names).toContain(name);
});
