/**
 * Summarizes a V8 .cpuprofile (from `npm run bench -- --profile`): where the gateway process spends its
 * CPU, by self time per function and per package.
 */
import fs from 'node:fs';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

const file = process.argv[2];
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const byFunction = new Map<string, number>();
const byPackage = new Map<string, number>();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/dist\//, 'dist/');
  byFunction.set(`${functionName || '(anonymous)'} ${where}:${lineNumber}`, (byFunction.get(`${functionName || '(anonymous)'} ${where}:${lineNumber}`) ?? 0) + us);
  const pkg = url.includes('node_modules/') ? url.split('node_modules/')[1].split('/').slice(0, url.split('node_modules/')[1].startsWith('@') ? 2 : 1).join('/') : url.includes('/dist/') ? 'gateway (dist)' : url ? 'node internals' : functionName || '(native)';
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
}
const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`).join('\n');
console.log(`total sampled: ${(total / 1e6).toFixed(1)} s\n\nby package:\n${top(byPackage, 15)}\n\nby function (self):\n${top(byFunction, 30)}`);
