// CloneSetEventHandlerOptimization: which pod updates may skip the CloneSet's reconcile.
import assert from 'node:assert/strict';
import { WorkloadExpectations } from '../../../src/controllers/workload.ts';
import { describe, test } from 'node:test';
import { cloneSetsSelecting, makeHandlers, podUpdateCannotChangeDecision } from '../../../src/controllers/cloneset/event-handler.ts';
import type { CloneSet } from '../../../src/apis/apps/cloneset.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import { cloneSet, pod } from './fixtures.ts';

const hooked = cloneSet({ lifecycle: { preDelete: { finalizersHandler: ['example.com/hook'] } } });
const inPlaceState = JSON.stringify({
  revision: 'cs-v2',
  updateTimestamp: '2026-07-01T11:00:00Z',
  lastContainerStatuses: { main: { imageID: 'id-nginx:1.0' } },
});

function changed(base: Pod, edit: (p: Pod) => void): Pod {
  const p = structuredClone(base);
  edit(p);
  return p;
}

// A resize in flight: spec says 200m, the container still reports 100m.
const resizing = changed(
  pod('cs-a', {
    annotations: {
      'apps.kruise.io/inplace-update-state': JSON.stringify({
        revision: 'cs-v2',
        updateTimestamp: '2026-07-01T11:00:00Z',
        lastContainerStatuses: null,
        updateResources: true,
      }),
    },
  }),
  (p) => {
    p.spec!.containers[0]!.resources = { requests: { cpu: '200m' } };
    p.status!.containerStatuses![0]!.resources = { requests: { cpu: '100m' } };
  },
);

// Spec already says nginx:2.0; the container still runs 1.0 (status image and imageID unchanged).
const updating = changed(
  pod('cs-a', {
    image: 'nginx:2.0',
    imageID: 'id-nginx:1.0',
    ready: false,
    annotations: { 'apps.kruise.io/inplace-update-state': inPlaceState },
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'InPlaceUpdateReady', status: 'False' },
    ],
  }),
  (p) => {
    p.status!.containerStatuses![0]!.image = 'nginx:1.0';
  },
);

describe('podUpdateCannotChangeDecision', () => {
  const base = pod('cs-a');
  const cases: Array<{ name: string; cs?: typeof hooked; old: Pod; cur: Pod; ignore: boolean }> = [
    {
      name: 'status noise (phase, hostIP) on a settled pod',
      old: base,
      cur: changed(base, (p) => {
        p.status!.phase = 'Running';
        (p.status as any).hostIP = '10.0.0.9';
      }),
      ignore: true,
    },
    {
      name: 'an unrelated annotation',
      old: base,
      cur: changed(base, (p) => {
        p.metadata.annotations = { note: 'x' };
      }),
      ignore: true,
    },
    {
      name: 'generation bump (spec changed)',
      old: base,
      cur: changed(base, (p) => {
        p.metadata.generation = 2;
      }),
      ignore: false,
    },
    {
      name: 'Ready flips',
      old: base,
      cur: changed(base, (p) => {
        p.status!.conditions![0]!.status = 'False';
      }),
      ignore: false,
    },
    {
      name: 'a lifecycle finalizer removed',
      cs: hooked,
      old: changed(base, (p) => {
        p.metadata.finalizers = ['example.com/hook'];
      }),
      cur: base,
      ignore: false,
    },
    {
      name: 'a finalizer the lifecycle does not handle',
      cs: hooked,
      old: base,
      cur: changed(base, (p) => {
        p.metadata.finalizers = ['other'];
      }),
      ignore: true,
    },
    {
      name: 'in-place update: new imageID reported (update completed, InPlaceUpdateReady still False)',
      old: updating,
      cur: changed(updating, (p) => {
        p.status!.containerStatuses![0]!.imageID = 'id-nginx:2.0';
      }),
      ignore: false,
    },
    {
      name: 'in-place update unfinished: container restarted',
      old: updating,
      cur: changed(updating, (p) => {
        p.status!.containerStatuses![0]!.restartCount = 1;
      }),
      ignore: false,
    },
    {
      name: 'resize: the kubelet reports the new resources (pod Ready, InPlaceUpdateReady True throughout)',
      old: resizing,
      cur: changed(resizing, (p) => {
        p.status!.containerStatuses![0]!.resources = { requests: { cpu: '200m' } };
      }),
      ignore: false,
    },
    {
      name: 'resize: status noise while resizing',
      old: resizing,
      cur: changed(resizing, (p) => {
        (p.status as any).podIP = '10.1.1.1';
      }),
      ignore: true,
    },
    {
      name: 'in-place update unfinished: nothing about containers moved',
      old: updating,
      cur: changed(updating, (p) => {
        (p.status as any).podIP = '10.1.1.1';
      }),
      ignore: true,
    },
  ];
  for (const c of cases) {
    test(`${c.ignore ? 'ignores' : 'keeps'}: ${c.name}`, () => {
      assert.equal(podUpdateCannotChangeDecision(c.cs ?? cloneSet(), c.old, c.cur), c.ignore);
    });
  }
});

describe('pod update handler with the gate', () => {
  const owner = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true };
  const owned = (p: Pod, rv: string) => ({ ...p, metadata: { ...p.metadata, ownerReferences: [owner], resourceVersion: rv } }) as Pod;

  function run(filterPodUpdates: boolean, old: Pod, cur: Pod): string[] {
    const added: string[] = [];
    const h = makeHandlers({
      queue: { add: (key) => void added.push(key) },
      expectations: new WorkloadExpectations(),
      getCloneSet: () => cloneSet(),
      listCloneSets: () => [cloneSet()],
      filterPodUpdates,
    });
    h.pod.onUpdate!(owned(old, '1'), owned(cur, '2'));
    return added;
  }
  const base = pod('cs-a');
  const noise = changed(base, (p) => {
    (p.status as any).hostIP = '10.0.0.9';
  });

  test('without the gate every update enqueues', () => assert.deepEqual(run(false, base, noise), ['default/cs']));
  test('with the gate status noise is dropped', () => assert.deepEqual(run(true, base, noise), []));
  test('with the gate a label change still enqueues', () =>
    assert.deepEqual(
      run(
        true,
        base,
        changed(noise, (p) => {
          p.metadata.labels!['apps.kruise.io/specified-delete'] = 'true';
        }),
      ),
      ['default/cs'],
    ));
  test('with the gate a deletion still enqueues', () =>
    assert.deepEqual(
      run(
        true,
        base,
        changed(base, (p) => {
          p.metadata.deletionTimestamp = '2026-07-01T12:00:00Z';
        }),
      ),
      ['default/cs'],
    ));
});

// Upstream's TestEnqueueRequestForPodCreate / TestEnqueueRequestForPodUpdate / TestGetPodCloneSets
// (kruise v1.8.2, cloneset_event_handler_test.go), with CloneSetEventHandlerOptimization on as there.
// The queue is a set, as a workqueue is; the expected queue length is the number of distinct keys.

describe('pod event handler: upstream cases', () => {
  const cs = (name: string, uid: string, key: string, namespace = 'default') =>
    ({
      metadata: { name, namespace, uid },
      spec: { replicas: 1, selector: { matchLabels: { key } }, template: { metadata: { labels: { key } } } },
    }) as CloneSet;
  const ref = (name: string, uid: string) => ({ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name, uid, controller: true });
  interface P {
    rv?: string;
    labels?: Record<string, string>;
    owner?: [string, string];
    deleting?: boolean;
    phase?: string;
    name?: string;
  }
  const mk = (p: P) =>
    ({
      metadata: {
        namespace: 'default',
        name: p.name ?? 'pod',
        resourceVersion: p.rv ?? '01',
        ...(p.labels ? { labels: p.labels } : {}),
        ...(p.owner ? { ownerReferences: [ref(...p.owner)] } : {}),
        ...(p.deleting ? { deletionTimestamp: '2026-07-01T12:00:00Z' } : {}),
      },
      spec: { containers: [] },
      status: p.phase ? { phase: p.phase } : {},
    }) as unknown as Pod;

  function handlers(sets: CloneSet[]) {
    const queue = new Set<string>();
    const expectations = new WorkloadExpectations();
    const scale = expectations.scale;
    const h = makeHandlers({
      queue: { add: (key) => void queue.add(key) },
      expectations,
      getCloneSet: (ns, name) => sets.find((s) => s.metadata?.namespace === ns && s.metadata?.name === name),
      listCloneSets: (ns) => sets.filter((s) => s.metadata?.namespace === ns),
      filterPodUpdates: true,
    });
    return { h, queue, scale };
  }

  const bothV1 = [cs('cs01', '001', 'v1'), cs('cs02', '002', 'v1')];
  const createCases: Array<{ name: string; sets?: CloneSet[]; pod: P; expectCreation?: string; want: string[] }> = [
    { name: 'no cs (pod being deleted)', pod: { deleting: true }, want: [] },
    { name: 'no cs', pod: {}, want: [] },
    {
      name: 'multi cs (an orphan matched by two)',
      sets: bothV1,
      pod: { name: 'pod-abc', labels: { key: 'v1' } },
      want: ['default/cs01', 'default/cs02'],
    },
    {
      name: 'correct owner reference',
      sets: bothV1,
      pod: { name: 'pod-xyz', labels: { key: 'v1' }, owner: ['cs02', '002'] },
      expectCreation: 'pod-xyz',
      want: ['default/cs02'],
    },
  ];
  for (const c of createCases) {
    test(`create: ${c.name}`, () => {
      const { h, queue, scale } = handlers(c.sets ?? []);
      if (c.expectCreation) scale.expectScale('default/cs02', 'create', c.expectCreation);
      h.pod.onAdd!(mk(c.pod), false);
      assert.deepEqual([...queue].sort(), c.want);
      if (c.expectCreation) assert.equal(scale.satisfiedExpectations('default/cs02').satisfied, true);
    });
  }

  const v1v2 = [cs('cs01', '001', 'v1'), cs('cs02', '002', 'v2')];
  const updateCases: Array<{ name: string; sets?: CloneSet[]; old: P; cur: P; want: string[] }> = [
    { name: 'resourceVersion no changed', old: {}, cur: {}, want: [] },
    {
      name: 'label changed and delete 1',
      sets: v1v2,
      old: { labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      cur: { rv: '02', labels: { key: 'v1', test: 'false' }, owner: ['cs01', '001'], deleting: true },
      want: ['default/cs01'],
    },
    {
      name: 'label changed and delete 2',
      sets: v1v2,
      old: { labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      cur: { rv: '02', labels: { key: 'v2', test: 'true' }, owner: ['cs02', '002'], deleting: true },
      want: ['default/cs01', 'default/cs02'],
    },
    {
      name: 'reference changed',
      sets: v1v2,
      old: { labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      cur: { rv: '02', labels: { key: 'v2', test: 'true' }, owner: ['cs02', '002'] },
      want: ['default/cs01', 'default/cs02'],
    },
    {
      name: 'reference not changed',
      sets: v1v2,
      old: { labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      cur: { rv: '02', labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      want: [],
    },
    {
      name: 'orphan changed (nothing that matters)',
      sets: v1v2,
      old: { labels: { key: 'v1', test: 'true' } },
      cur: { rv: '02', labels: { key: 'v1', test: 'true' } },
      want: [],
    },
    {
      name: 'reference changed (released to an orphan matched by two others)',
      sets: [...v1v2, cs('cs03', '003', 'v2')],
      old: { labels: { key: 'v1', test: 'true' }, owner: ['cs01', '001'] },
      cur: { rv: '02', labels: { key: 'v2', test: 'true' } },
      want: ['default/cs01', 'default/cs02', 'default/cs03'],
    },
    {
      name: 'container status invalid change',
      sets: [cs('cs01', '001', 'v1'), cs('cs02', '002', 'v2')],
      old: { owner: ['cs01', '001'], phase: 'Pending' },
      cur: { rv: '02', owner: ['cs01', '001'], phase: 'Running', deleting: true },
      want: ['default/cs01'],
    },
  ];
  for (const c of updateCases) {
    test(`update: ${c.name}`, () => {
      const { h, queue } = handlers(c.sets ?? []);
      h.pod.onUpdate!(mk(c.old), mk(c.cur));
      assert.deepEqual([...queue].sort(), c.want);
    });
  }

  const getCases: Array<{ name: string; sets: CloneSet[]; pod: Pod; want: string[] }> = [
    {
      name: 'pods without labels match no CloneSet',
      sets: [{ metadata: { name: 'basic', namespace: '' } } as CloneSet],
      pod: mk({ name: 'foo1' }),
      want: [],
    },
    {
      name: 'matching labels, not namespace',
      sets: [cs('foo', '1', 'bar', '')].map((s) => ({ ...s, spec: { ...s.spec!, selector: { matchLabels: { foo: 'bar' } } } })),
      pod: { ...mk({ name: 'foo2', labels: { foo: 'bar' } }), metadata: { name: 'foo2', namespace: 'ns', labels: { foo: 'bar' } } },
      want: [],
    },
    {
      name: 'matching namespace and labels',
      sets: [cs('bar', '1', 'bar', 'ns')].map((s) => ({ ...s, spec: { ...s.spec!, selector: { matchLabels: { foo: 'bar' } } } })),
      pod: { ...mk({ name: 'foo3' }), metadata: { name: 'foo3', namespace: 'ns', labels: { foo: 'bar' } } },
      want: ['bar'],
    },
  ];
  for (const c of getCases) {
    test(`cloneSetsSelecting: ${c.name}`, () => {
      assert.deepEqual(
        cloneSetsSelecting(c.pod, c.sets).map((s) => s.metadata?.name),
        c.want,
      );
    });
  }
});
