// The layering the README promises, checked on every import in src/:
//
//   apis ← util ← runtime ← controllers | webhooks | daemon | cluster ← manager ← cli
//
// - controllers, webhooks and daemon sit side by side and never import each other (or what is
//   above them); the manager wires them together, the cli starts the manager or the daemon.
// - cluster (the embedded local control plane: binaries, PKI, processes, KWOK) is a peer of
//   those three: it builds on apis/util/runtime and only the cli uses it.
// - Inside controllers and webhooks, one folder per kind/resource: a folder imports its own files,
//   the layer's top-level modules (src/controllers/*.ts, src/webhooks/*.ts: registries and shared
//   rules) and the shared folders named below, never another kind's folder. The daemon is one
//   component; its sub-folders share the ContainerRuntime types and may import each other.
// - No import circles: no module of src/ reaches itself through its imports (type-only imports
//   included: a circle of types is still two modules that cannot be read apart).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

const ALLOWED: Record<string, readonly string[]> = {
  apis: [],
  util: ['apis'],
  runtime: ['apis', 'util'],
  controllers: ['apis', 'util', 'runtime'],
  webhooks: ['apis', 'util', 'runtime'],
  daemon: ['apis', 'util', 'runtime'],
  cluster: ['apis', 'util', 'runtime'],
  manager: ['apis', 'util', 'runtime', 'controllers', 'webhooks', 'daemon'],
  cli: ['apis', 'util', 'runtime', 'controllers', 'webhooks', 'daemon', 'cluster', 'manager'],
};

/** Layers made of one folder per kind, which must not import each other. */
const PER_KIND = new Set(['controllers', 'webhooks']);
/** Folders inside a per-kind layer that hold what several kinds share. */
const SHARED_FOLDERS: Record<string, readonly string[]> = { controllers: ['imagejobs'], webhooks: [] };

interface Edge {
  from: string;
  to: string;
}

const IMPORT_RE =
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** Every relative import of a source file, as paths relative to src/. */
function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith('.')) continue;
    out.push(path.relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), spec)));
  }
  return out;
}

/** Why the import from → to breaks the layering, or undefined when it is allowed. */
function violation({ from, to }: Edge): string | undefined {
  const [fromLayer, ...fromRest] = from.split(path.sep);
  const [toLayer, ...toRest] = to.split(path.sep);
  if (to.startsWith('..')) return 'imports from outside src/';
  const allowed = ALLOWED[fromLayer!];
  if (!allowed) return `${fromLayer} is not a known layer (add it to the README and this test)`;
  if (!ALLOWED[toLayer!]) return `${toLayer} is not a known layer`;
  if (fromLayer !== toLayer) return allowed.includes(toLayer!) ? undefined : `${fromLayer} must not import ${toLayer}`;
  if (!PER_KIND.has(fromLayer!)) return undefined;
  // Same per-kind layer: a top-level module may import anything in it (index.ts registers every
  // kind); a folder only its own files, top-level modules and shared folders.
  if (fromRest.length === 1 || toRest.length === 1) return undefined;
  const fromFolder = fromRest[0]!;
  const toFolder = toRest[0]!;
  if (fromFolder === toFolder) return undefined;
  const shared = SHARED_FOLDERS[fromLayer!]!;
  if (shared.includes(toFolder) && !shared.includes(fromFolder)) return undefined;
  return `${fromLayer}/${fromFolder} must not import ${fromLayer}/${toFolder} (move what they share to a shared module)`;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(SRC, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

function allEdges(): Edge[] {
  return sourceFiles('').flatMap((from) => importsOf(from, fs.readFileSync(path.join(SRC, from), 'utf8')).map((to) => ({ from, to })));
}

/**
 * The import circles of a graph: its strongly connected components with more than one module (or
 * a module importing itself), each as one circle through them, from its least module back to it.
 */
function importCircles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    next.set(from, [...(next.get(from) ?? []), to]);
    if (!next.has(to)) next.set(to, []);
  }
  // Tarjan's algorithm, iterative so a long chain of imports cannot exhaust the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const root of [...next.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; i: number }[] = [{ node: root, i: 0 }];
    index.set(root, index.size);
    low.set(root, index.get(root)!);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const targets = next.get(frame.node)!;
      if (frame.i < targets.length) {
        const to = targets[frame.i++]!;
        if (!index.has(to)) {
          index.set(to, index.size);
          low.set(to, index.get(to)!);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || targets.includes(frame.node)) components.push(component);
    }
  }
  return components.map((component) => circleThrough(new Set(component), next));
}

/** One circle from the least module of a component back to it, by a breadth-first search inside it. */
function circleThrough(component: ReadonlySet<string>, next: ReadonlyMap<string, string[]>): string[] {
  const start = [...component].sort()[0]!;
  const via = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const to of next.get(node)!) {
      if (!component.has(to)) continue;
      if (to === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(via.get(path[0]!)!);
        return [...path, start];
      }
      if (!via.has(to)) {
        via.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

describe('layering', () => {
  test('every import in src/ follows apis ← util ← runtime ← controllers | webhooks | daemon | cluster ← manager ← cli', () => {
    const edges = allEdges();
    // A parser that silently matched nothing would pass anything.
    assert.ok(edges.length > 500, `only ${edges.length} imports found`);
    const problems = edges.flatMap((e) => {
      const why = violation(e);
      return why ? [`${e.from} → ${e.to}: ${why}`] : [];
    });
    assert.deepEqual(problems, []);
  });

  test('no import circles among src/ modules', () => {
    const circles = importCircles(allEdges()).map((c) => c.join(' → '));
    assert.deepEqual(circles, []);
  });

  test('the circle finder, table-driven', () => {
    const graph = (...pairs: string[]): Edge[] => pairs.map((p) => ({ from: p[0]!, to: p[1]! }));
    assert.deepEqual(importCircles(graph('ab', 'bc', 'cd')), []);
    assert.deepEqual(importCircles(graph('ab', 'ba')), [['a', 'b', 'a']]);
    assert.deepEqual(importCircles(graph('aa')), [['a', 'a']]);
    assert.deepEqual(importCircles(graph('xb', 'bc', 'cd', 'db', 'de')), [['b', 'c', 'd', 'b']]);
    assert.deepEqual(importCircles(graph('ab', 'ba', 'cd', 'dc', 'bc')).sort(), [
      ['a', 'b', 'a'],
      ['c', 'd', 'c'],
    ]);
  });

  test('every layer under src/ is a known one', () => {
    const dirs = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    assert.deepEqual(dirs, Object.keys(ALLOWED).sort());
  });

  test('the parser sees every import form', () => {
    const text = [
      "import { a } from '../util/a.ts';",
      "import type { B } from '../../runtime/b.ts';",
      "import {\n  c,\n  d,\n} from './c.ts';",
      "export * from './e.ts';",
      "export { f } from '../apis/f.ts';",
      "const g = await import('../manager/g.ts');",
      "import './side-effect.ts';",
      "import fs from 'node:fs';",
    ].join('\n');
    assert.deepEqual(importsOf(path.join('controllers', 'x', 'y.ts'), text), [
      path.join('controllers', 'util', 'a.ts'),
      path.join('runtime', 'b.ts'),
      path.join('controllers', 'x', 'c.ts'),
      path.join('controllers', 'x', 'e.ts'),
      path.join('controllers', 'apis', 'f.ts'),
      path.join('controllers', 'manager', 'g.ts'),
      path.join('controllers', 'x', 'side-effect.ts'),
    ]);
  });

  test('the rules, table-driven', () => {
    const cases: [from: string, to: string, ok: boolean][] = [
      ['util/a.ts', 'apis/core.ts', true],
      ['util/a.ts', 'runtime/client.ts', false],
      ['runtime/a.ts', 'util/clock.ts', true],
      ['daemon/daemon.ts', 'manager/options.ts', false],
      ['daemon/cri/client.ts', 'daemon/runtime/types.ts', true],
      ['controllers/cloneset/plan.ts', 'webhooks/cloneset/validating.ts', false],
      ['webhooks/cloneset/validating.ts', 'controllers/cloneset/plan.ts', false],
      ['controllers/imagepulljob/plan.ts', 'controllers/nodeimage/plan.ts', false],
      ['controllers/imagepulljob/plan.ts', 'controllers/imagejobs/resources.ts', true],
      ['controllers/imagejobs/resources.ts', 'controllers/imagepulljob/plan.ts', false],
      ['controllers/cloneset/controller.ts', 'controllers/types.ts', true],
      ['controllers/index.ts', 'controllers/cloneset/controller.ts', true],
      ['webhooks/statefulset/validating.ts', 'webhooks/cloneset/validating.ts', false],
      ['webhooks/statefulset/validating.ts', 'webhooks/workload.ts', true],
      ['cluster/local-cluster.ts', 'util/pki.ts', true],
      ['cluster/local-cluster.ts', 'manager/manager.ts', false],
      ['manager/manager.ts', 'cluster/local-cluster.ts', false],
      ['manager/manager.ts', 'controllers/index.ts', true],
      ['cli/kruise.ts', 'manager/manager.ts', true],
      ['apis/core.ts', 'util/clock.ts', false],
    ];
    for (const [from, to, ok] of cases) {
      const why = violation({ from: path.normalize(from), to: path.normalize(to) });
      assert.equal(why === undefined, ok, `${from} → ${to}: ${why ?? 'allowed'}`);
    }
  });
});
