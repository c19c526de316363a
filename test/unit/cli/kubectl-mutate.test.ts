// The plugin's writes (set, rollout pause/resume/restart/undo, scaledown) on the in-memory API
// server: a JSON patch of the change that tests the generation read. Status and label writes in
// between cannot fail it; a spec change in between makes it read again and write over the new spec;
// a refusal whose object did not move is the answer.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import { runKubectlKruise } from '../../../src/cli/kubectl/main.ts';
import { fakeKubeconfig, status, useFakeApiServer, type FakeApiServer, type RecordedRequest } from '../runtime/fake-apiserver.ts';

const CLONESETS = 'apps.kruise.io/v1beta1/clonesets';
const KEY = 'ns/web';

function cloneSet(generation: number, image = 'nginx:1.0') {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'ns', generation },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image }] } },
    },
    status: { observedGeneration: generation, replicas: 2 },
  };
}

describe('kubectl kruise writes: a JSON patch testing the generation read', () => {
  let server: FakeApiServer;
  useFakeApiServer((s) => (server = s));
  let kubeconfig = '';
  let dir = '';
  before(() => ({ dir, kubeconfig } = fakeKubeconfig(server, 'kruise-mutate-')));
  after(() => rmSync(dir, { recursive: true, force: true }));

  beforeEach(() => {
    server.serveDiscovery('apps.kruise.io/v1beta1', [{ name: 'clonesets', namespaced: true, kind: 'CloneSet' }]);
    server.put(CLONESETS, cloneSet(1));
    server.requests.splice(0);
  });

  async function kruise(args: string[]) {
    let stdout = '';
    let stderr = '';
    const io = { out: (t: string) => void (stdout += t), err: (t: string) => void (stderr += t), isTTY: false };
    const code = await runKubectlKruise(['--kubeconfig', kubeconfig, '-n', 'ns', ...args], io);
    return { code, stdout, stderr };
  }
  const isPatch = (r: RecordedRequest) => r.method === 'PATCH' && r.path.endsWith('/clonesets/web');
  const patches = () => server.requests.filter(isPatch);
  const stored = () => server.getObject(CLONESETS, KEY) as ReturnType<typeof cloneSet>;

  test('the patch tests the generation and changes only what the command changed', async () => {
    const r = await kruise(['set', 'image', 'cloneset/web', 'main=nginx:2.0']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'cloneset.apps.kruise.io/web image updated\n');
    const [patch] = patches();
    assert.equal(patch!.headers['content-type'], 'application/json-patch+json');
    assert.deepEqual(JSON.parse(patch!.body), [
      { op: 'test', path: '/metadata/generation', value: 1 },
      { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:2.0' },
    ]);
  });

  async function untilPatches(n: number) {
    const deadline = Date.now() + 5000;
    while (patches().length < n) {
      if (Date.now() > deadline) throw new Error(`${patches().length} patches of the CloneSet, not ${n}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Holds each of the next `times` patches until the spec has moved (a new generation) under it. */
  async function moveSpecUnderEachPatch(times: number, move: (spec: ReturnType<typeof cloneSet>['spec']) => void = () => {}) {
    for (let i = 0; i < times; i++) {
      const release = server.hold(isPatch);
      await untilPatches(i + 1);
      const moved = structuredClone(stored());
      moved.metadata.generation++;
      move(moved.spec);
      server.put(CLONESETS, moved);
      release();
    }
  }

  test('a status write between the read and the write does not refuse it (a resourceVersion precondition would)', async () => {
    const release = server.hold(isPatch);
    const run = kruise(['set', 'image', 'cloneset/web', 'main=nginx:2.0']);
    await untilPatches(1);
    server.put(CLONESETS, { ...stored(), status: { observedGeneration: 1, replicas: 3 } });
    release();
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(patches().length, 1);
    assert.equal(stored().spec.template.spec.containers[0]!.image, 'nginx:2.0');
  });

  test('a spec change between the read and the write: refused, read again, written over the new spec', async () => {
    server.put('/v1/pods', {
      metadata: {
        name: 'web-a',
        namespace: 'ns',
        ownerReferences: [{ controller: true, uid: server.getObject(CLONESETS, KEY)!.metadata.uid, name: 'web' }],
      },
    });
    // Someone scales to 5 meanwhile: scaledown's replicas come from what it read.
    const [r] = await Promise.all([
      kruise(['scaledown', 'cloneset/web', '--pods', 'web-a']),
      moveSpecUnderEachPatch(1, (spec) => (spec.replicas = 5)),
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(patches().length, 2);
    assert.equal(stored().spec.replicas, 4);
    assert.deepEqual((stored().spec as { scaleStrategy?: unknown }).scaleStrategy, { podsToDelete: ['web-a'] });
  });

  test('a refusal of the change itself (the object did not move) is the answer, after one more read', async () => {
    server.failNext(isPatch, 422, status(422, 'Invalid', 'CloneSet.apps.kruise.io "web" is invalid: spec.replicas: Invalid value: -1'));
    const r = await kruise(['set', 'image', 'cloneset/web', 'main=nginx:2.0']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'error: CloneSet.apps.kruise.io "web" is invalid: spec.replicas: Invalid value: -1\n');
    assert.equal(patches().length, 1);
  });

  test('a spec that moves under every write: after six, the conflict kubectl users know', async () => {
    const [r] = await Promise.all([kruise(['set', 'image', 'cloneset/web', 'main=nginx:2.0']), moveSpecUnderEachPatch(6)]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: Operation cannot be fulfilled on clonesets.apps.kruise.io "web": the object has been modified; please apply your changes to the latest version and try again\n',
    );
    assert.equal(patches().length, 6);
    assert.equal(stored().spec.template.spec.containers[0]!.image, 'nginx:1.0');
  });
});
