// The embedded database's folder (DATA_DIR): private to the service's user, and held by one
// process at a time. PGlite is one process's database: a second process opening the same files
// would corrupt them, so `serve`, `migrate` and workers on one folder exclude each other here.
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'chatgate.lock';

/** Refusal to open a data folder another live process holds (or that this process holds already). */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another chatgate process (pid ${holderPid}): stop it first ` +
        `(the embedded database is one process's; run several processes with DATABASE_URL)`,
    );
    this.name = 'DataDirLockedError';
  }
}

export type DataDirLock = { release(): void };

/** Folders this process holds (a second open in the same process is refused too). */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid a lock file names; NaN when the file is empty or garbled (a holder that died mid-write). */
function holderOf(file: string): number | null {
  try {
    const text = fs.readFileSync(file, 'utf8');
    const pid = Number(text.trim().split(/\s+/)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : Number.NaN;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Takes the folder's lock file (created exclusively, holding this pid) or throws
 * DataDirLockedError naming the live holder. A lock left by a process that is gone (its pid no
 * longer runs, or it is this very pid: a restarted container's pid 1) is taken over: moved aside
 * under a name of this process, checked to still be that stale lock (another starter may have
 * taken it over first: then its fresh lock is put back and this start is refused), then replaced.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = path.resolve(dataDir);
  if (held.has(dir)) throw new DataDirLockedError(dir, process.pid);
  const file = path.join(dir, LOCK_FILE);
  for (let tries = 0; ; tries++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 3) throw err;
    }
    const holder = holderOf(file);
    if (holder === null) continue; // released meanwhile: try again
    if (!Number.isNaN(holder) && holder !== process.pid && alive(holder)) throw new DataDirLockedError(dir, holder);
    const aside = `${file}.stale.${process.pid}`;
    try {
      fs.renameSync(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const moved = holderOf(aside);
    if (moved !== holder && !(Number.isNaN(moved) && Number.isNaN(holder))) {
      // Someone else's fresh lock: put it back (unless yet another one is there) and refuse.
      try {
        fs.linkSync(aside, file);
      } catch {
        /* a lock is in place either way */
      }
      fs.rmSync(aside, { force: true });
      throw new DataDirLockedError(dir, moved ?? holder);
    }
    fs.rmSync(aside, { force: true });
  }
  held.add(dir);
  const onExit = () => release();
  process.on('exit', onExit);
  let released = false;
  function release() {
    if (released) return;
    released = true;
    process.off('exit', onExit);
    held.delete(dir);
    // Only our own lock: never one a later holder took over.
    if (holderOf(file) === process.pid) fs.rmSync(file, { force: true });
  }
  return { release };
}

/** The process's umask becomes 077 and the folder exists (0700 when created now). */
export function prepareDataDir(dataDir: string): void {
  process.umask(0o077);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

/**
 * Makes the folder private before the database opens: the process's umask becomes 077 (every
 * file created from now on, by PGlite too, is 0600, every folder 0700), and what already exists
 * under it is narrowed to those modes. Returns how many entries had their mode fixed.
 */
export function secureDataDir(dataDir: string): number {
  prepareDataDir(dataDir);
  let fixed = 0;
  const visit = (p: string, isDir: boolean) => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return;
    if ((st.mode & 0o077) !== 0) {
      // The owner keeps read and write (and a file its execute bit); group and others lose all.
      fs.chmodSync(p, isDir ? 0o700 : (st.mode & 0o100) | 0o600);
      fixed++;
    }
    if (isDir)
      for (const entry of fs.readdirSync(p, { withFileTypes: true }))
        visit(path.join(p, entry.name), entry.isDirectory());
  };
  // A DATA_DIR that is a symbolic link: its target (links inside are left alone).
  visit(fs.realpathSync(dataDir), true);
  return fixed;
}
