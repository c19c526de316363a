// One shape for every controller (docs/CONVENTIONS.md, CloneSet the model): each kind's folder in
// src/controllers/ has a pure planner (plan.ts), an executor that writes (executor.ts) and a thin
// controller (controller.ts) that reads, plans and hands the plan on — it never writes itself.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

const CONTROLLERS = join(import.meta.dirname, '../../../src/controllers');

/** Folders of src/controllers/ that are shared by several kinds, not a kind of their own. */
const SHARED_FOLDERS = ['imagejobs'];

const SHAPE = ['plan.ts', 'executor.ts', 'controller.ts'];

const kindFolders = readdirSync(CONTROLLERS, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !SHARED_FOLDERS.includes(e.name))
  .map((e) => e.name)
  .sort();

/** The source without comments and string contents, so prose and messages never count as code. */
function codeOf(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g, "''");
}

const WRITE_PATTERNS: ReadonlyArray<[string, RegExp]> = [
  // A call of a write verb on anything named client (deps.client, this.deps.client, client).
  ['a client write', /\bclient\s*\??\.\s*(create|update|updateStatus|patch|delete|deleteCollection|evict)\s*(<[^>]*>)?\s*\(/],
  // The shared write steps, and the workload writer, belong to executors.
  ['a shared write step', /\b(writeStatus|applyWrites|writeAllInSlowStart|writeInBatches|WorkloadWriter)\b/],
];

/** What in a controller.ts writes directly, by pattern name. */
function directWrites(source: string): string[] {
  const code = codeOf(source);
  return WRITE_PATTERNS.filter(([, re]) => re.test(code)).map(([name]) => name);
}

describe('controller shape', () => {
  test('the write check sees writes and nothing else', () => {
    assert.deepEqual(directWrites('await this.deps.client.patch(Pods, name, patch);'), ['a client write']);
    assert.deepEqual(directWrites('await client.updateStatus<CloneSet>(CloneSets, cs);'), ['a client write']);
    assert.deepEqual(directWrites("import { applyWrites } from '../../runtime/writes.ts';"), ['a shared write step']);
    assert.deepEqual(directWrites('const pod = await deps.client.get<Pod>(Pods, name);'), []);
    assert.deepEqual(directWrites('resourceVersions.delete(obj); cache.delete(key);'), []);
    assert.deepEqual(directWrites('// the executor calls client.patch(...) here\nconst note = "client.delete(x)";'), []);
  });

  for (const kind of kindFolders) {
    test(`${kind}/ has plan.ts, executor.ts and a controller.ts that does not write`, () => {
      const missing = SHAPE.filter((f) => !existsSync(join(CONTROLLERS, kind, f)));
      assert.deepEqual(missing, [], `src/controllers/${kind}/ lacks ${missing.join(', ')}`);
      const writes = directWrites(readFileSync(join(CONTROLLERS, kind, 'controller.ts'), 'utf8'));
      assert.deepEqual(writes, [], `src/controllers/${kind}/controller.ts writes directly (${writes.join(', ')}): move it to executor.ts`);
    });
  }
});
