import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodTemplateSpec } from '../../../src/apis/core.ts';
import {
  calculateInPlaceUpdateSpec,
  canUpdateInPlace,
  checkInPlaceUpdateCompleted,
  containerPriorities,
  diffJSON,
  envFromMetadataHash,
  getInPlaceUpdateState,
  planInPlaceRefresh,
  planInPlaceUpdate,
} from '../../../src/util/inplaceupdate.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { newCloneSetRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';
import { cloneSet, pod } from '../cloneset/fixtures.ts';

const T0 = '2026-07-01T12:00:00Z';
const T1 = '2026-07-01T12:00:10Z';
const T2 = '2026-07-01T12:01:00Z';

function rev(t: PodTemplateSpec, n = 1): ControllerRevision {
  return newCloneSetRevision(cloneSet({ template: t }), n);
}

const twoContainers = (
  img1: string,
  img2: string,
  env1: Array<{ name: string; value?: string; valueFrom?: object }> = [],
  env2: typeof env1 = [],
  annotations: Record<string, string> = {},
): PodTemplateSpec => ({
  metadata: { labels: { app: 'demo' }, annotations },
  spec: {
    containers: [
      { name: 'c1', image: img1, env: env1 },
      { name: 'c2', image: img2, env: env2 },
    ],
  },
});

const OPTS = { envFromMetadata: true, verticalScaling: false };

describe('diffJSON', () => {
  it('replaces scalars, adds/removes keys, escapes pointer tokens', () => {
    assert.deepEqual(diffJSON({ a: 1, b: { 'x/y': 1 } }, { a: 2, c: 3, b: {} }), [
      { op: 'replace', path: '/a', value: 2 },
      { op: 'remove', path: '/b/x~1y' },
      { op: 'add', path: '/c', value: 3 },
    ]);
  });
});

describe('canUpdateInPlace', () => {
  const base = twoContainers('a:1', 'b:1');
  const cases: Array<[string, PodTemplateSpec, boolean]> = [
    ['image change', twoContainers('a:2', 'b:1'), true],
    ['both images', twoContainers('a:2', 'b:2'), true],
    ['label change', { ...base, metadata: { labels: { app: 'demo', v: '2' } } }, true],
    ['env change', twoContainers('a:1', 'b:1', [{ name: 'X', value: '1' }]), false],
    ['added container', { ...base, spec: { containers: [...base.spec!.containers, { name: 'c3', image: 'c:1' }] } }, false],
    ['spec field', { ...base, spec: { ...base.spec!, hostNetwork: true } }, false],
  ];
  for (const [name, next, want] of cases) it(name, () => assert.equal(canUpdateInPlace(rev(base), rev(next, 2), OPTS), want));
  it('missing old revision → recreate', () => assert.equal(canUpdateInPlace(undefined, rev(base), OPTS), false));
});

describe('env from metadata', () => {
  const fieldRef = (path: string) => ({ fieldRef: { fieldPath: path } });
  const oldT = twoContainers('a:1', 'b:1', [{ name: 'V', valueFrom: fieldRef("metadata.annotations['version']") }], [], {
    version: '1',
    other: 'x',
  });
  const newT = twoContainers('a:1', 'b:1', [{ name: 'V', valueFrom: fieldRef("metadata.annotations['version']") }], [], {
    version: '2',
    other: 'y',
  });

  it('a changed annotation read by env restarts only the containers that read it', () => {
    const spec = calculateInPlaceUpdateSpec(rev(oldT), rev(newT, 2), OPTS)!;
    assert.deepEqual(spec.containerImages, {});
    assert.deepEqual(spec.containerRefMetadata, { c1: { annotations: { version: '2' } } });
    assert.equal(spec.updateEnvFromMetadata, true);
    assert.equal(spec.metaDataPatch, '{"metadata":{"annotations":{"other":"y"}}}');

    const p = pod('cs-p', { containers: oldT.spec!.containers, annotations: { version: '1', other: 'x' } });
    const plan = planInPlaceUpdate(p, rev(oldT), rev(newT, 2), { ...OPTS, now: T0 })!;
    assert.equal(plan.pod.metadata.annotations!.version, '2');
    assert.equal(plan.pod.metadata.annotations!.other, 'y');
    const state = getInPlaceUpdateState(plan.pod)!;
    assert.equal(state.updateEnvFromMetadata, true);
    assert.deepEqual(state.containerBatchesRecord, [{ timestamp: T0, containers: ['c1'] }]);
  });

  it('without the gate the change is a plain metadata patch', () => {
    const spec = calculateInPlaceUpdateSpec(rev(oldT), rev(newT, 2), { envFromMetadata: false, verticalScaling: false })!;
    assert.deepEqual(spec.containerRefMetadata, {});
    assert.equal(spec.metaDataPatch, '{"metadata":{"annotations":{"other":"y","version":"2"}}}');
  });

  it('completion waits for the daemon to report the expected env hash', () => {
    const p = pod('cs-p', { containers: newT.spec!.containers, annotations: { version: '2' } });
    const plan = planInPlaceUpdate(
      pod('cs-p', { containers: oldT.spec!.containers, annotations: { version: '1' } }),
      rev(oldT),
      rev(newT, 2),
      { ...OPTS, now: T0 },
    )!;
    p.metadata.annotations = { ...plan.pod.metadata.annotations };
    assert.match(checkInPlaceUpdateCompleted(p)!, /runtime-container-meta not found/);
    // A container without env from metadata still has a hash (upstream hashes the JSON `null`).
    const noEnvHash = envFromMetadataHash(p.spec!.containers[1], p.metadata);
    const meta = (hash: number, c2Hash = noEnvHash) =>
      JSON.stringify({
        containers: [
          { name: 'c1', containerID: 'cid-cs-p-c1', hashes: { extractedEnvFromMetadataHash: hash } },
          { name: 'c2', containerID: 'cid-cs-p-c2', hashes: { extractedEnvFromMetadataHash: c2Hash } },
        ],
      });
    const expected = envFromMetadataHash(p.spec!.containers[0], p.metadata);
    p.metadata.annotations['apps.kruise.io/runtime-containers-meta'] = meta(1);
    assert.equal(checkInPlaceUpdateCompleted(p), 'waiting for all containers hash consistent');
    p.metadata.annotations['apps.kruise.io/runtime-containers-meta'] = meta(expected, 0);
    assert.equal(checkInPlaceUpdateCompleted(p), 'waiting for all containers hash consistent', 'no env from metadata is not 0');
    p.metadata.annotations['apps.kruise.io/runtime-containers-meta'] = meta(expected);
    assert.equal(checkInPlaceUpdateCompleted(p), undefined);
  });
});

describe('image update', () => {
  const oldT = twoContainers('a:1', 'b:1');
  const newT = twoContainers('a:2', 'b:1');

  it('writes image, revision, state with old imageIDs, and InPlaceUpdateReady=False', () => {
    const p = pod('cs-p', { containers: oldT.spec!.containers });
    const plan = planInPlaceUpdate(p, rev(oldT), rev(newT, 2), { ...OPTS, now: T0 })!;
    assert.equal(plan.pod.spec!.containers[0].image, 'a:2');
    assert.equal(plan.pod.spec!.containers[1].image, 'b:1');
    assert.equal(plan.pod.metadata.labels!['controller-revision-hash'], rev(newT, 2).metadata.name);
    assert.equal(
      plan.pod.metadata.annotations!['apps.kruise.io/inplace-update-state'],
      `{"revision":"${rev(newT, 2).metadata.name}","updateTimestamp":"${T0}","lastContainerStatuses":{"c1":{"imageID":"id-a:1"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"${T0}","containers":["c1"]}]}`,
    );
    const c = plan.conditions!.find((x) => x.type === 'InPlaceUpdateReady')!;
    assert.deepEqual([c.status, c.reason], ['False', 'StartInPlaceUpdate']);
    assert.equal(plan.conditions!.find((x) => x.type === 'Ready')!.status, 'False');
    assert.equal(plan.delaySeconds, 0);
  });

  it('completion: imageID must change; refresh then sets InPlaceUpdateReady=True', () => {
    const plan = planInPlaceUpdate(pod('cs-p', { containers: oldT.spec!.containers }), rev(oldT), rev(newT, 2), { ...OPTS, now: T0 })!;
    const running: Pod = { ...plan.pod, status: { ...plan.pod.status, conditions: plan.conditions } };
    assert.equal(checkInPlaceUpdateCompleted(running), 'container c1 imageID not changed');
    assert.deepEqual(planInPlaceRefresh(running, { now: T1 }), {});
    running.status!.containerStatuses = running.status!.containerStatuses!.map((s) =>
      s.name === 'c1' ? { ...s, image: 'a:2', imageID: 'id-a:2' } : s,
    );
    assert.equal(checkInPlaceUpdateCompleted(running), undefined);
    const refresh = planInPlaceRefresh(running, { now: T1 });
    assert.equal(refresh.conditions!.find((x) => x.type === 'InPlaceUpdateReady')!.status, 'True');
  });

  it('grace period: only the grace annotation first, images after the grace ends', () => {
    const plan = planInPlaceUpdate(pod('cs-p', { containers: oldT.spec!.containers }), rev(oldT), rev(newT, 2), {
      ...OPTS,
      now: T0,
      gracePeriodSeconds: 30,
    })!;
    assert.equal(plan.delaySeconds, 30);
    assert.equal(plan.pod.spec!.containers[0].image, 'a:1');
    assert.ok(plan.pod.metadata.annotations!['apps.kruise.io/inplace-update-grace']);
    assert.match(checkInPlaceUpdateCompleted(plan.pod)!, /grace period/);
    assert.deepEqual(planInPlaceRefresh(plan.pod, { now: T1 }), { delaySeconds: 20 });
    const done = planInPlaceRefresh(plan.pod, { now: T2 });
    assert.equal(done.pod!.spec!.containers[0].image, 'a:2');
    assert.equal(done.pod!.metadata.annotations!['apps.kruise.io/inplace-update-grace'], undefined);
    assert.deepEqual(getInPlaceUpdateState(done.pod!)!.lastContainerStatuses, { c1: { imageID: 'id-a:1' } });
  });
});

describe('container launch priority', () => {
  const prio = (n: number) => [{ name: 'KRUISE_CONTAINER_PRIORITY', value: String(n) }];
  const oldT = twoContainers('a:1', 'b:1', prio(0), prio(10));
  const newT = twoContainers('a:2', 'b:2', prio(0), prio(10));

  it('priorities from env, Ordered annotation, or barrier', () => {
    assert.deepEqual([...containerPriorities(pod('p', { containers: oldT.spec!.containers })).values()], [0, 10]);
    assert.deepEqual(
      [...containerPriorities(pod('p', { containers: twoContainers('a', 'b').spec!.containers })).values()],
      [undefined, undefined],
    );
    const ordered = pod('p', {
      containers: twoContainers('a', 'b').spec!.containers,
      annotations: { 'apps.kruise.io/container-launch-priority': 'Ordered' },
    });
    assert.deepEqual([...containerPriorities(ordered).values()], [-0, -1]);
  });

  it('two containers with different priorities update in two batches', () => {
    const p = pod('cs-p', { containers: oldT.spec!.containers });
    const first = planInPlaceUpdate(p, rev(oldT), rev(newT, 2), { ...OPTS, now: T0 })!;
    assert.deepEqual(
      first.pod.spec!.containers.map((c) => c.image),
      ['a:1', 'b:2'],
    );
    let state = getInPlaceUpdateState(first.pod)!;
    assert.deepEqual(state.nextContainerImages, { c1: 'a:2' });
    assert.deepEqual(state.preCheckBeforeNext, { containersRequiredReady: ['c2'] });
    assert.match(checkInPlaceUpdateCompleted(first.pod)!, /next batches/);

    // c2 restarted with the new image but is not ready yet: wait
    const running: Pod = structuredClone(first.pod);
    running.status!.containerStatuses = [
      { name: 'c1', image: 'a:1', imageID: 'id-a:1', ready: true, restartCount: 0 },
      { name: 'c2', image: 'b:2', imageID: 'id-b:2', ready: false, restartCount: 0 },
    ];
    assert.deepEqual(planInPlaceRefresh(running, { now: T1 }), {});

    // c2 ready: second batch
    running.status!.containerStatuses[1].ready = true;
    const second = planInPlaceRefresh(running, { now: T1 });
    assert.deepEqual(
      second.pod!.spec!.containers.map((c) => c.image),
      ['a:2', 'b:2'],
    );
    state = getInPlaceUpdateState(second.pod!)!;
    assert.equal(state.nextContainerImages, undefined);
    assert.equal(state.preCheckBeforeNext, undefined);
    assert.deepEqual(state.containerBatchesRecord, [
      { timestamp: T0, containers: ['c2'] },
      { timestamp: T1, containers: ['c1'] },
    ]);
    assert.deepEqual(Object.keys(state.lastContainerStatuses!).sort(), ['c1', 'c2']);
  });
});
