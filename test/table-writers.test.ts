// One writer per table (issue #34, decision 0069): every INSERT, UPDATE, DELETE, TRUNCATE, MERGE
// or COPY of a table in src/ is in the table's owner module, and ARCHITECTURE.md ("Who writes
// what") names that owner. A module is a file, except that every file under src/lifecycle/ is the
// one module `src/lifecycle/` (the message ledger). Reads are free: any module may SELECT.
//
// The scan reads the SQL where it is written: in template strings and string literals, with
// aliases (`INSERT INTO usage_daily AS u`), in data-modifying CTEs (`WITH ... INSERT INTO`),
// `UPDATE x d SET`, `ONLY`, quoted and schema-qualified names. A statement whose table is
// interpolated (`UPDATE ${table} SET`) cannot be attributed: only the files of
// DYNAMIC_WRITERS may write that way. Trigger functions in the migrations are read too: a table
// written by one must be declared in WRITTEN_BY_TRIGGERS.
import fs from 'node:fs';
import path from 'node:path';

import { expect, it } from 'vitest';

/**
 * Files that write tables named at run time, and why. rekey re-seals the columns of
 * secrets/sealed-columns.ts in place (the same plaintext under the current key); it sits below
 * the owners in the layers, so it cannot call them.
 */
const DYNAMIC_WRITERS: Record<string, string> = {
  'src/secrets/rekey.ts': 're-seals SEALED_COLUMNS in place (value unchanged, new key)',
};

/** Tables a trigger function writes (besides their owner), and which. */
const WRITTEN_BY_TRIGGERS: Record<string, string[]> = {
  // 023_inbound_media.sql: a file's bytes go with its media_files or inbound_media row.
  media_blobs: ['media_blobs_follow'],
};

const ROOT = path.resolve(import.meta.dirname, '..');
const ID = String.raw`(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_]*)(?:\.(?:"[^"]+"|[A-Za-z_][A-Za-z0-9_]*))?`;
const DYNAMIC = String.raw`\$\{[^}]*\}`;
/** Each pattern's first group is the target (a name, or an interpolation). */
const WRITE_PATTERNS = [
  String.raw`\bINSERT\s+INTO\s+(${ID}|${DYNAMIC})`,
  String.raw`\bUPDATE\s+(?:ONLY\s+)?(${ID}|${DYNAMIC})(?:\s+(?:AS\s+)?[A-Za-z_][A-Za-z0-9_]*)?\s+SET\b`,
  String.raw`\bDELETE\s+FROM\s+(?:ONLY\s+)?(${ID}|${DYNAMIC})`,
  String.raw`\bMERGE\s+INTO\s+(?:ONLY\s+)?(${ID}|${DYNAMIC})`,
  String.raw`\bCOPY\s+(${ID}|${DYNAMIC})(?:\s*\([^)]*\))?\s+FROM\b`,
  String.raw`\bTRUNCATE\s+(?:TABLE\s+)?(?:ONLY\s+)?((?:${ID}|${DYNAMIC})(?:\s*,\s*(?:ONLY\s+)?(?:${ID}|${DYNAMIC}))*)`,
].map((p) => new RegExp(p, 'gi'));

/** A table name as PostgreSQL folds it: quotes kept as written, otherwise lower case; no schema. */
function tableName(raw: string): string {
  const last = raw.trim().split('.').pop()!;
  return last.startsWith('"') ? last.slice(1, -1) : last.toLowerCase();
}

/** Source lines that are comments (JavaScript's) are blanked, so prose cannot count as SQL. */
function withoutCommentLines(text: string): string {
  return text
    .split('\n')
    .map((l) => (/^\s*(\/\/|\/\*|\*)/.test(l) ? '' : l))
    .join('\n');
}

type Write = { table: string; file: string; line: number; dynamic: boolean };

function writesIn(file: string, text: string): Write[] {
  const writes: Write[] = [];
  for (const re of WRITE_PATTERNS)
    for (const m of text.matchAll(re)) {
      const line = text.slice(0, m.index).split('\n').length;
      for (const target of m[1]!.split(',')) {
        const t = target.trim().replace(/^ONLY\s+/i, '');
        writes.push({ table: t.startsWith('${') ? t : tableName(t), file, line, dynamic: t.startsWith('${') });
      }
    }
  return writes;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return rel === 'src/db/migrations' ? [] : sourceFiles(rel);
    return /\.(ts|mts|sql)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [rel] : [];
  });
}

/** file:line places in file, then line, order. */
const byLine = (a: string, b: string) => {
  const [fa, la] = a.split(':');
  const [fb, lb] = b.split(':');
  return fa === fb ? Number(la) - Number(lb) : fa!.localeCompare(fb!);
};

const moduleOf = (file: string) => (file.startsWith('src/lifecycle/') ? 'src/lifecycle/' : file);

/** The tables the migrations (and src/, e.g. schema_migrations) create, less those dropped. */
function knownTables(): Set<string> {
  const texts = [
    ...fs.readdirSync(path.join(ROOT, 'src/db/migrations')).map((f) => `src/db/migrations/${f}`),
    ...sourceFiles('src'),
  ].map((f) => fs.readFileSync(path.join(ROOT, f), 'utf8'));
  const tables = new Set<string>();
  for (const t of texts)
    for (const m of t.matchAll(new RegExp(String.raw`\bCREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(${ID})`, 'gi')))
      tables.add(tableName(m[1]!));
  for (const t of texts)
    for (const m of t.matchAll(new RegExp(String.raw`\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(${ID})`, 'gi')))
      tables.delete(tableName(m[1]!));
  for (const t of texts)
    for (const m of t.matchAll(
      new RegExp(String.raw`\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(${ID})\s+RENAME\s+TO\s+(${ID})`, 'gi'),
    )) {
      tables.delete(tableName(m[1]!));
      tables.add(tableName(m[2]!));
    }
  return tables;
}

/** Writes made by trigger functions (the bodies of CREATE FUNCTION in the migrations), by function. */
function triggerWrites(): Map<string, Set<string>> {
  const byTable = new Map<string, Set<string>>();
  for (const f of fs.readdirSync(path.join(ROOT, 'src/db/migrations'))) {
    const text = fs.readFileSync(path.join(ROOT, 'src/db/migrations', f), 'utf8');
    const fn = new RegExp(
      String.raw`CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(${ID})[\s\S]*?\$(\w*)\$([\s\S]*?)\$\2\$`,
      'gi',
    );
    for (const m of text.matchAll(fn))
      for (const w of writesIn(f, m[3]!)) {
        if (!byTable.has(w.table)) byTable.set(w.table, new Set());
        byTable.get(w.table)!.add(tableName(m[1]!));
      }
  }
  return byTable;
}

/** ARCHITECTURE.md's "Who writes what": one line per table, "- `table` → `owner`". */
function documentedOwners(): Map<string, string> {
  const doc = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Who writes what'));
  expect(section, 'ARCHITECTURE.md has a "## Who writes what" section').toBeDefined();
  const owners = new Map<string, string>();
  for (const m of section!.matchAll(/^- `([a-z_0-9]+)` → `([^`]+)`/gm)) owners.set(m[1]!, m[2]!);
  return owners;
}

function scan() {
  const tables = knownTables();
  const writers = new Map<string, Map<string, string[]>>(); // table → module → file:line
  const dynamic: Write[] = [];
  for (const file of sourceFiles('src')) {
    const text = withoutCommentLines(fs.readFileSync(path.join(ROOT, file), 'utf8'));
    for (const w of writesIn(file, text)) {
      if (w.dynamic) {
        dynamic.push(w);
        continue;
      }
      if (!tables.has(w.table)) continue; // not a table: prose, a CTE's name
      if (!writers.has(w.table)) writers.set(w.table, new Map());
      const byModule = writers.get(w.table)!;
      const mod = moduleOf(file);
      byModule.set(mod, [...(byModule.get(mod) ?? []), `${file}:${w.line}`]);
    }
  }
  return { tables, writers, dynamic };
}

it('finds writes however the SQL is written', () => {
  const found = (sql: string) => writesIn('x.ts', sql).map((w) => w.table);
  expect(found('`WITH c AS (SELECT 1) INSERT INTO usage_daily AS u (a) SELECT 1 ON CONFLICT DO NOTHING`')).toEqual([
    'usage_daily',
  ]);
  expect(found("'UPDATE chat_accounts a SET x = 1'")).toEqual(['chat_accounts']);
  expect(found('`UPDATE ONLY "Media_Files" AS f SET x = 1`')).toEqual(['Media_Files']);
  expect(found('`WITH gone AS (DELETE FROM public.senders s USING t RETURNING 1) SELECT 1`')).toEqual(['senders']);
  expect(found('`TRUNCATE TABLE a, ONLY b`')).toEqual(['a', 'b']);
  expect(found('`SELECT 1 FROM t FOR UPDATE SKIP LOCKED`')).toEqual([]);
  expect(found('`INSERT INTO q (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2`')).toEqual(['q']);
  expect(writesIn('x.ts', '`UPDATE ${c.table} SET ${c.column} = $1`')[0]).toMatchObject({ dynamic: true });
});

it('has one writer module per table, the one ARCHITECTURE.md names', () => {
  const { tables, writers, dynamic } = scan();
  expect(tables.size).toBeGreaterThan(40); // the migrations were read
  expect(writers.get('chat_accounts')?.size).toBeGreaterThan(0); // the scan found writes

  const offenders: string[] = [];
  for (const [table, byModule] of [...writers].sort(([a], [b]) => a.localeCompare(b))) {
    if (byModule.size === 1) continue;
    offenders.push(
      `${table} is written by ${byModule.size} modules: ` +
        [...byModule].map(([mod, at]) => `${mod} (${at.sort(byLine).join(', ')})`).join('; '),
    );
  }
  expect(offenders, 'tables with more than one writer module').toEqual([]);

  const unexplained = dynamic.filter((w) => !(w.file in DYNAMIC_WRITERS)).map((w) => `${w.file}:${w.line} ${w.table}`);
  expect(unexplained, 'writes to a table named at run time (add the owner call, or DYNAMIC_WRITERS)').toEqual([]);

  const owners = documentedOwners();
  const mismatched: string[] = [];
  for (const table of [...tables].sort()) {
    const documented = owners.get(table);
    if (!documented) {
      mismatched.push(`${table}: missing from ARCHITECTURE.md "Who writes what"`);
      continue;
    }
    const scanned = [...(writers.get(table)?.keys() ?? [])];
    if (scanned.length === 0 && !WRITTEN_BY_TRIGGERS[table]) mismatched.push(`${table}: no module writes it`);
    if (scanned.length === 1 && scanned[0] !== documented)
      mismatched.push(`${table}: written by ${scanned[0]}, ARCHITECTURE.md says ${documented}`);
  }
  for (const table of owners.keys())
    if (!tables.has(table)) mismatched.push(`${table}: in ARCHITECTURE.md but not a table of the migrations`);
  expect(mismatched, 'ARCHITECTURE.md "Who writes what" against the scan').toEqual([]);
});

it('declares every table a trigger function writes', () => {
  const undeclared: string[] = [];
  for (const [table, fns] of triggerWrites())
    for (const fn of fns)
      if (!WRITTEN_BY_TRIGGERS[table]?.includes(fn)) undeclared.push(`${table} written by trigger function ${fn}`);
  expect(undeclared).toEqual([]);
  expect(triggerWrites().get('media_blobs')).toEqual(new Set(['media_blobs_follow'])); // the scan reads them
});
