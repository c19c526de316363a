// CloneSetEventHandlerOptimization: which pod updates may skip the CloneSet's reconcile.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { makeHandlers, podUpdateCannotChangeDecision } from '../../../src/controllers/cloneset/event-handler.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../../../src/runtime/expectations.ts';
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

// Spec already says nginx:2.0; the container still runs 1.0 (status image and imageID unchanged).
const updating = changed(pod('cs-a', {
  image: 'nginx:2.0',
  imageID: 'id-nginx:1.0',
  ready: false,
  annotations: { 'apps.kruise.io/inplace-update-state': inPlaceState },
  conditions: [{ type: 'Ready', status: 'False' }, { type: 'InPlaceUpdateReady', status: 'False' }],
}), (p) => { p.status!.containerStatuses![0]!.image = 'nginx:1.0'; });

describe('podUpdateCannotChangeDecision', () => {
  const base = pod('cs-a');
  const cases: Array<{ name: string; cs?: typeof hooked; old: Pod; cur: Pod; ignore: boolean }> = [
    { name: 'status noise (phase, hostIP) on a settled pod', old: base, cur: changed(base, (p) => { p.status!.phase = 'Running'; (p.status as any).hostIP = '10.0.0.9'; }), ignore: true },
    { name: 'an unrelated annotation', old: base, cur: changed(base, (p) => { p.metadata.annotations = { note: 'x' }; }), ignore: true },
    { name: 'generation bump (spec changed)', old: base, cur: changed(base, (p) => { p.metadata.generation = 2; }), ignore: false },
    { name: 'Ready flips', old: base, cur: changed(base, (p) => { p.status!.conditions![0]!.status = 'False'; }), ignore: false },
    { name: 'a lifecycle finalizer removed', cs: hooked, old: changed(base, (p) => { p.metadata.finalizers = ['example.com/hook']; }), cur: base, ignore: false },
    { name: 'a finalizer the lifecycle does not handle', cs: hooked, old: base, cur: changed(base, (p) => { p.metadata.finalizers = ['other']; }), ignore: true },
    { name: 'in-place update: new imageID reported (update completed, InPlaceUpdateReady still False)', old: updating, cur: changed(updating, (p) => { p.status!.containerStatuses![0]!.imageID = 'id-nginx:2.0'; }), ignore: false },
    { name: 'in-place update unfinished: container restarted', old: updating, cur: changed(updating, (p) => { p.status!.containerStatuses![0]!.restartCount = 1; }), ignore: false },
    { name: 'in-place update unfinished: nothing about containers moved', old: updating, cur: changed(updating, (p) => { (p.status as any).podIP = '10.1.1.1'; }), ignore: true },
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
      scaleExpectations: new ScaleExpectations(),
      revisionExpectations: new ScaleExpectations(),
      resourceVersions: new ResourceVersionExpectations(),
      getCloneSet: () => cloneSet(),
      filterPodUpdates,
    });
    h.pod.onUpdate!(owned(old, '1'), owned(cur, '2'));
    return added;
  }
  const base = pod('cs-a');
  const noise = changed(base, (p) => { (p.status as any).hostIP = '10.0.0.9'; });

  test('without the gate every update enqueues', () => assert.deepEqual(run(false, base, noise), ['default/cs']));
  test('with the gate status noise is dropped', () => assert.deepEqual(run(true, base, noise), []));
  test('with the gate a label change still enqueues', () =>
    assert.deepEqual(run(true, base, changed(noise, (p) => { p.metadata.labels!['apps.kruise.io/specified-delete'] = 'true'; })), ['default/cs']));
  test('with the gate a deletion still enqueues', () =>
    assert.deepEqual(run(true, base, changed(base, (p) => { p.metadata.deletionTimestamp = '2026-07-01T12:00:00Z'; })), ['default/cs']));
});
