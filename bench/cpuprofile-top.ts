// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by where the code lives
// (our src/ folders, node_modules packages, node internals, GC, idle).
//   tsx bench/cpuprofile-top.ts <file.cpuprofile | directory> [top=25]
import fs from 'node:fs';
import path from 'node:path';

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
};
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

export type ProfileSummary = {
  file: string;
  totalMs: number;
  functions: { name: string; where: string; selfMs: number; pct: number }[];
  areas: { area: string; selfMs: number; pct: number }[];
  /** Time charged to the nearest frame of our own code (src/) above each sample: what our functions cost, libraries included. */
  ours: { name: string; where: string; ms: number; pct: number }[];
};

/** Where a frame's code lives: `src/dispatch`, `pkg:postgres`, `node:internal`, `(garbage collector)`… */
function areaOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('wasm://')) return 'WebAssembly (PGlite)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `pkg:${nm[1]}`;
  const src = /\/(?:dist\/)?src\/([^/]+)\//.exec(url);
  if (src) return `src/${src[1]}`;
  if (url.startsWith('node:')) return 'node:internal';
  return path.basename(url);
}

export function summarise(file: string, top = 25): ProfileSummary {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  // Each sample's time is the delta to the next sample.
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const oursOf = new Map<number, string | null>();
  const ownerOf = (id: number): string | null => {
    if (oursOf.has(id)) return oursOf.get(id)!;
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const up = parent.get(id);
    const owner =
      /\/src\//.test(url) && !url.includes('node_modules')
        ? `${functionName || '(anonymous)'}@${url.replace(/^.*\/src\//, 'src/')}:${lineNumber + 1}`
        : up === undefined
          ? null
          : ownerOf(up);
    oursOf.set(id, owner);
    return owner;
  };
  /** The nearest frame with code (a package or node internals) above a sample with none of ours. */
  const libraryOf = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { url, functionName } = byId.get(at)!.callFrame;
      if (url !== '') return areaOf(url, functionName);
    }
    return '(native only)';
  };
  const ours = new Map<string, number>();
  const fns = new Map<string, { name: string; where: string; us: number }>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const name = functionName || '(anonymous)';
    const where = url === '' ? '' : `${url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${lineNumber + 1}`;
    const key = `${name}@${where}`;
    const f = fns.get(key) ?? { name, where, us: 0 };
    f.us += us;
    fns.set(key, f);
    const area = areaOf(url, name);
    areas.set(area, (areas.get(area) ?? 0) + us);
    if (name !== '(idle)' && name !== '(garbage collector)' && name !== '(program)') {
      const owner = ownerOf(id) ?? `(no frame of ours) ${libraryOf(id)}`;
      ours.set(owner, (ours.get(owner) ?? 0) + us);
    }
  }
  const pct = (us: number) => Math.round((us / total) * 1000) / 10;
  return {
    file,
    totalMs: Math.round(total / 1000),
    functions: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: Math.round(f.us / 1000), pct: pct(f.us) })),
    areas: [...areas]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, selfMs: Math.round(us / 1000), pct: pct(us) })),
    ours: [...ours]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => {
        const at = key.lastIndexOf('@');
        return at < 0
          ? { name: key, where: '', ms: Math.round(us / 1000), pct: pct(us) }
          : { name: key.slice(0, at), where: key.slice(at + 1), ms: Math.round(us / 1000), pct: pct(us) };
      }),
  };
}

/** The .cpuprofile files under a directory (one per thread; the largest is the main thread). */
export function profilesIn(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
}

export function printSummary(s: ProfileSummary, top = 25) {
  console.log(`\n${s.file}: ${s.totalMs} ms sampled`);
  console.log('  by area (self time):');
  for (const a of s.areas.slice(0, 12)) console.log(`    ${String(a.pct).padStart(5)} %  ${a.area}`);
  console.log('  top functions (self time):');
  for (const f of s.functions.slice(0, top))
    console.log(`    ${String(f.pct).padStart(5)} %  ${String(f.selfMs).padStart(6)} ms  ${f.name}  ${f.where}`);
  console.log('  charged to our nearest function (its libraries and native work included):');
  for (const f of s.ours.slice(0, top))
    console.log(`    ${String(f.pct).padStart(5)} %  ${String(f.ms).padStart(6)} ms  ${f.name}  ${f.where}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const target = process.argv[2];
  if (!target) {
    console.error('usage: tsx bench/cpuprofile-top.ts <file.cpuprofile | directory> [top]');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 25);
  const files = fs.statSync(target).isDirectory() ? profilesIn(target).slice(0, 1) : [target];
  for (const f of files) printSummary(summarise(f, top), top);
}
