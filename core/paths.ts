import fs from 'node:fs';
import path from 'node:path';

/** The folder holding package.json, found from this file whether it runs from source or dist/. */
export function findRepoRoot(start = __dirname): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'tsconfig.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export const repoRoot = findRepoRoot();
