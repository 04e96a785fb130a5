// Summarizes a V8 .cpuprofile (node --cpu-prof; bench/llm-proxy.ts writes one for the
// gateway child with BENCH_CPU_PROF=<dir>): the functions with the most self time,
// the most inclusive ("total") time among the project's own functions, and self time
// per package, so the hot path's cost can be attributed.
//
//   node --import tsx bench/support/cpuprofile-top.ts <file.cpuprofile> [--from <s>] [--to <s>] [--top <n>] [--timeline]
//
// --from/--to keep only samples in that window (seconds since the profile started),
// e.g. to leave out start-up and migrations; --timeline prints how busy each second
// was, to find the window of a run.
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const file = process.argv[2];
if (!file || file.startsWith('--')) throw new Error('usage: cpuprofile-top.ts <file.cpuprofile> [--from s] [--to s] [--top n]');
const from = Number(argument('--from') ?? 0) * 1e6;
const to = Number(argument('--to') ?? Infinity) * 1e6;
const top = Number(argument('--top') ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const root = process.cwd();

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function where(node: ProfileNode): string {
  const { url, lineNumber } = node.callFrame;
  if (!url) return '';
  const local = url.startsWith('file://') ? path.relative(root, new URL(url).pathname) : url;
  return `${local}:${lineNumber + 1}`;
}
const label = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${where(node)}`.trim();
const ours = (node: ProfileNode) => /^(src|dist|bench)\//.test(where(node));

function packageOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (!url) return functionName.startsWith('(') ? functionName : '(native/V8)';
  if (url.startsWith('node:')) return 'node internals';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1]!;
  const local = where(node);
  if (local.startsWith('src/')) return `src/${local.split('/').slice(1, -1).join('/')}`;
  return local.split(':')[0]!;
}

if (process.argv.includes('--timeline')) {
  const busy: number[] = [];
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]!;
    if (byId.get(profile.samples[i]!)!.callFrame.functionName === '(idle)') continue;
    const second = Math.floor(at / 1e6);
    busy[second] = (busy[second] ?? 0) + (profile.timeDeltas[i + 1] ?? 0);
  }
  console.log(Array.from(busy, (us, second) => `${second}s:${Math.round((us ?? 0) / 1e4)}%`).join(' '));
}

const self = new Map<string, number>();
const total = new Map<string, number>();
const perPackage = new Map<string, number>();
let time = 0;
let counted = 0;
for (let i = 0; i < profile.samples.length; i++) {
  time += profile.timeDeltas[i]!;
  if (time < from || time > to) continue;
  const delta = profile.timeDeltas[i + 1] ?? 0;
  const node = byId.get(profile.samples[i]!)!;
  if (node.callFrame.functionName === '(idle)') continue;
  counted += delta;
  self.set(label(node), (self.get(label(node)) ?? 0) + delta);
  perPackage.set(packageOf(node), (perPackage.get(packageOf(node)) ?? 0) + delta);
  // Inclusive time: once per distinct function on the stack.
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!;
    if (!ours(frame)) continue;
    const name = label(frame);
    if (seen.has(name)) continue;
    seen.add(name);
    total.set(name, (total.get(name) ?? 0) + delta);
  }
}

const pct = (us: number) => `${((us / counted) * 100).toFixed(1).padStart(5)} %`;
const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
const print = (title: string, map: Map<string, number>, n: number) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${ms(us)} ${pct(us)}  ${name}`);
};
console.log(`${file}: ${(counted / 1e6).toFixed(2)} s of CPU samples (not idle) in the window`);
print('self time by package', perPackage, 25);
print('self time by function', self, top);
print('total (inclusive) time, project functions', total, top);
