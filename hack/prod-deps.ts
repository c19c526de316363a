// Prints the package directories (relative to node_modules/) the production dependencies of
// package.json need at run time, resolved as Node resolves them: dependencies, optional and
// installed peer dependencies, transitively; never devDependencies. hack/build-image.sh copies them.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const root = path.resolve(import.meta.dirname, '..');
const modules = realpathSync(path.join(root, 'node_modules'));
const read = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** The directory `name` resolves to from package directory `from`: its node_modules, then its parents'. */
function resolve(name: string, from: string): string | undefined {
  for (let dir = from; dir.startsWith(modules); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
  }
  const top = path.join(modules, name);
  return existsSync(path.join(top, 'package.json')) ? top : undefined;
}

const seen = new Set<string>();
const queue: string[] = [root];
while (queue.length) {
  const dir = queue.shift()!;
  const m = read(dir);
  const names = [
    ...Object.keys(m.dependencies ?? {}).map((n) => ({ n, optional: false })),
    ...Object.keys(m.optionalDependencies ?? {}).map((n) => ({ n, optional: true })),
    ...Object.keys(m.peerDependencies ?? {}).map((n) => ({ n, optional: true })),
  ];
  for (const { n, optional } of names) {
    const found = resolve(n, dir);
    if (!found) {
      if (optional) continue;
      throw new Error(`${n} (needed by ${dir}) is not installed`);
    }
    if (seen.has(found)) continue;
    seen.add(found);
    queue.push(found);
  }
}
process.stdout.write(
  [...seen]
    .map((d) => path.relative(modules, d))
    .sort()
    .join('\n') + '\n',
);
