/** The bench's helper processes (mock upstream, floor, gateway): started from dist/, ready once they print their JSON line. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../core/paths';

export function startChild(script: string, env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<{ child: ChildProcess; info: Record<string, string> }> {
  const child = spawn(process.execPath, [...nodeArgs, path.join(repoRoot, 'dist', script)], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ child, info: JSON.parse(line) });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

