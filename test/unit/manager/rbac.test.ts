// config/rbac/ is what the code declares, and the declarations cover what the code touches: every
// Kubernetes resource type a controller's folder names (informers, writes) is in its access list,
// and likewise for the daemon and the manager's own modules. (Verbs are proven by
// test/integration/rbac.test.ts, which runs the manager and the daemon under exactly these roles.)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as resources from '../../../src/runtime/resources.ts';
import { allControllers } from '../../../src/controllers/index.ts';
import { daemonAccess, daemonSecretAccess } from '../../../src/daemon/rbac.ts';
import { leaderElectionAccess, managerOwnAccess, rbacManifests } from '../../../src/manager/rbac.ts';
import type { Access } from '../../../src/runtime/rbac.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('config/rbac/ matches the declared accesses (run `npm run gen` when this fails)', () => {
  for (const [file, text] of Object.entries(rbacManifests())) {
    assert.equal(readFileSync(path.join(root, 'config', 'rbac', file), 'utf8'), text, `config/rbac/${file} is stale: run \`npm run gen\``);
  }
});

/** Every exported ResourceType constant of resources.ts, by identifier. */
const resourceTypes = Object.entries(resources).filter(
  (e): e is [string, resources.ResourceType] =>
    typeof e[1] === 'object' && e[1] !== null && 'resource' in e[1] && 'group' in e[1] && 'kind' in e[1],
);

function sources(dir: string): string {
  const abs = path.join(root, dir);
  const files = readdirSync(abs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && path.basename(f) !== 'rbac.ts');
  // Comments name kinds in prose; only code counts.
  return files
    .map((f) =>
      readFileSync(path.join(abs, f), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, ''),
    )
    .join('\n');
}

/** Resource types named in code (by their resources.ts identifier) that the accesses do not cover. */
function undeclared(code: string, accesses: readonly Access[]): string[] {
  const declared = new Set(accesses.flatMap((a) => a.resources.map((r) => `${a.group}/${r.split('/')[0]}`)));
  return resourceTypes
    .filter(([id]) => new RegExp(`\\b${id}\\b`).test(code))
    .map(([id, t]) => ({ id, key: `${t.group}/${t.resource}` }))
    .filter(({ key }) => !declared.has(key))
    .map(({ id, key }) => `${id} (${key})`);
}

test('each controller declares every resource its folder uses', () => {
  for (const c of allControllers) {
    assert.deepEqual(undeclared(sources(`src/controllers/${c.name}`), c.access), [], `controller ${c.name}`);
  }
});

test('the daemon declares every resource it uses', () => {
  assert.deepEqual(undeclared(sources('src/daemon'), [...daemonAccess, ...daemonSecretAccess]), []);
});

test("the manager's own modules (start-up, webhooks, events, leader election) declare every resource they use", () => {
  const code = [
    sources('src/manager'),
    sources('src/runtime/webhook'),
    readFileSync(path.join(root, 'src/runtime/events.ts'), 'utf8'),
    readFileSync(path.join(root, 'src/runtime/event-sink.ts'), 'utf8'),
    readFileSync(path.join(root, 'src/runtime/lease-store.ts'), 'utf8'),
  ].join('\n');
  // CoreEvents is the fallback for roles without events.k8s.io (upstream's); ours grants the latter.
  assert.deepEqual(
    undeclared(code, [...managerOwnAccess, ...leaderElectionAccess, ...allControllers.flatMap((c) => c.access)]).filter(
      (r) => !r.startsWith('CoreEvents'),
    ),
    [],
  );
});
