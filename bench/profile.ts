import fs from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  file: string;
  /** Sampled CPU time, idle excluded. */
  busyMs: number;
  /** Self time by where the code lives: a package, the gateway's own code, Node's internals, GC. */
  byPlace: { place: string; percent: number }[];
  /** The functions with the most self time. */
  byFunction: { fn: string; percent: number }[];
}

/** Where a frame's code lives, coarsely enough to tell framework from driver from our own code. */
function place(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return 'node internals';
  const dist = url.indexOf('/dist/');
  if (dist >= 0) {
    const file = url.slice(dist + '/dist/'.length);
    return file.startsWith('generated/') ? 'generated Prisma client' : `gateway ${file.split('/').slice(0, -1).join('/') || file}`;
  }
  return url.replace(/^file:\/\//, '');
}

/** Summarises the newest V8 CPU profile (`node --cpu-prof`) in `dir`, or null when there is none. */
export function summariseProfile(dir: string): ProfileSummary | null {
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  const newest = files.map((f) => path.join(dir, f)).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  if (!newest) return null;
  const profile = JSON.parse(fs.readFileSync(newest, 'utf8')) as { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[] };
  const interval = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (!hits || node.callFrame.functionName === '(idle)') continue;
    busy += hits;
    const where = place(node.callFrame.url, node.callFrame.functionName);
    places.set(where, (places.get(where) ?? 0) + hits);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + hits);
  }
  const top = <K extends string>(map: Map<string, number>, key: K, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, hits]) => ({ [key]: name, percent: Math.round((1000 * hits) / Math.max(1, busy)) / 10 }) as Record<K, string> & { percent: number });
  return { file: newest, busyMs: Math.round(busy * interval), byPlace: top(places, 'place', 15), byFunction: top(functions, 'fn', 20) };
}
