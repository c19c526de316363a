// In-place vertical scaling (gate InPlaceWorkloadVerticalScaling): which template resource changes
// resize in place, what the update writes, when the pod leaves endpoints and when it is done.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, PodTemplateSpec } from '../../../src/apis/core.ts';
import type { Pod } from '../../../src/apis/core-objects.ts';
import {
  calculateInPlaceUpdateSpec,
  checkInPlaceUpdateCompleted,
  getInPlaceUpdateState,
  planInPlaceRefresh,
  planInPlaceUpdate,
} from '../../../src/util/inplaceupdate.ts';
import { podQOSClass } from '../../../src/util/inplaceupdate-vertical.ts';
import { newCloneSetRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';
import { cloneSet, pod } from '../cloneset/fixtures.ts';

const T0 = '2026-07-01T12:00:00Z';
const T1 = '2026-07-01T12:00:10Z';
const ON = { envFromMetadata: true, verticalScaling: true };

const res = (cpu: string, mem: string, limCpu = '1', limMem = '1Gi') => ({
  requests: { cpu, memory: mem },
  limits: { cpu: limCpu, memory: limMem },
});

function tmpl(containers: Container[], labels: Record<string, string> = {}): PodTemplateSpec {
  return { metadata: { labels: { app: 'demo', ...labels } }, spec: { containers } };
}
const rev = (t: PodTemplateSpec, n = 1): ControllerRevision => newCloneSetRevision(cloneSet({ template: t }), n);
const main = (resources: Container['resources'], extra: Partial<Container> = {}): Container => ({
  name: 'main',
  image: 'nginx:1',
  resources,
  ...extra,
});

/** The pod running `t`, its containers reporting the spec's resources. */
function podOf(t: PodTemplateSpec): Pod {
  const p = pod('cs-p', { containers: structuredClone(t.spec!.containers) });
  p.status!.containerStatuses = p.status!.containerStatuses!.map((s) => ({
    ...s,
    resources: structuredClone(t.spec!.containers.find((c) => c.name === s.name)!.resources),
  }));
  return p;
}

describe('which resource changes resize in place', () => {
  const base = tmpl([main(res('100m', '100Mi'))]);
  const cases: Array<[string, PodTemplateSpec, boolean]> = [
    ['cpu and memory requests', tmpl([main(res('200m', '200Mi'))]), true],
    ['limits', tmpl([main(res('100m', '100Mi', '2', '2Gi'))]), true],
    ['resources and image', tmpl([main(res('200m', '100Mi'), { image: 'nginx:2' })]), true],
    [
      'a resource added',
      tmpl([main({ ...res('100m', '100Mi'), requests: { cpu: '100m', memory: '100Mi', 'ephemeral-storage': '1Gi' } })]),
      false,
    ],
    ['a resource removed', tmpl([main({ requests: { cpu: '100m' }, limits: { cpu: '1', memory: '1Gi' } })]), false],
    [
      'a resource other than cpu and memory',
      tmpl([main({ ...res('100m', '100Mi'), limits: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '1' } })]),
      false,
    ],
    // Burstable → Guaranteed
    ['the QoS class changes', tmpl([main(res('1', '1Gi'))]), false],
    [
      'the resize policy changes',
      tmpl([main(res('200m', '100Mi'), { resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] })]),
      false,
    ],
  ];
  for (const [name, next, want] of cases) {
    it(name, () => assert.equal(calculateInPlaceUpdateSpec(rev(base), rev(next, 2), ON) !== undefined, want));
  }
  it('without the gate a resource change recreates', () => {
    assert.equal(
      calculateInPlaceUpdateSpec(rev(base), rev(tmpl([main(res('200m', '200Mi'))]), 2), { ...ON, verticalScaling: false }),
      undefined,
    );
  });
  it('records the new values per container, canonical', () => {
    const spec = calculateInPlaceUpdateSpec(rev(base), rev(tmpl([main(res('0.2', '100Mi', '1', '2048Mi'))]), 2), ON)!;
    assert.deepEqual(spec.containerResources, { main: { requests: { cpu: '200m' }, limits: { memory: '2Gi' } } });
  });
});

describe('podQOSClass', () => {
  const spec = (resources: Container['resources']) => ({ containers: [main(resources)] });
  it('BestEffort, Burstable, Guaranteed', () => {
    assert.equal(podQOSClass(spec(undefined)), 'BestEffort');
    assert.equal(podQOSClass(spec({ requests: { cpu: '0' } })), 'BestEffort');
    assert.equal(podQOSClass(spec(res('100m', '100Mi'))), 'Burstable');
    assert.equal(podQOSClass(spec(res('1', '1Gi'))), 'Guaranteed');
    assert.equal(podQOSClass(spec(res('1000m', '1024Mi'))), 'Guaranteed', 'compared as quantities');
    assert.equal(podQOSClass(spec({ limits: { cpu: '1' } })), 'Burstable', 'a limit on cpu only');
  });
});

describe('resize in place', () => {
  const oldT = tmpl([main(res('100m', '100Mi'))]);
  const newT = tmpl([main(res('200m', '200Mi'))]);

  it('writes the new resources and records updateResources; a resize alone keeps the pod in endpoints', () => {
    const plan = planInPlaceUpdate(podOf(oldT), rev(oldT), rev(newT, 2), { ...ON, now: T0 })!;
    assert.deepEqual(plan.pod.spec!.containers[0].resources, res('200m', '200Mi'));
    assert.equal(plan.pod.spec!.containers[0].image, 'nginx:1');
    assert.equal(plan.conditions, undefined, 'no InPlaceUpdateReady=False');
    assert.equal(
      plan.pod.metadata.annotations!['apps.kruise.io/inplace-update-state'],
      `{"revision":"${rev(newT, 2).metadata.name}","updateTimestamp":"${T0}","lastContainerStatuses":null,"updateResources":true,"containerBatchesRecord":[{"timestamp":"${T0}","containers":["main"]}]}`,
    );
  });

  it('completes when every container status reports the spec resources', () => {
    const plan = planInPlaceUpdate(podOf(oldT), rev(oldT), rev(newT, 2), { ...ON, now: T0 })!;
    const p = plan.pod;
    assert.equal(checkInPlaceUpdateCompleted(p), 'container main resources not changed');
    p.status!.containerStatuses![0].resources = { requests: { cpu: '0.2', memory: '200Mi' }, limits: { cpu: '1', memory: '1Gi' } };
    assert.equal(checkInPlaceUpdateCompleted(p), undefined, 'quantities compared by value');
    delete p.status!.containerStatuses![0].resources;
    assert.equal(checkInPlaceUpdateCompleted(p), 'container main resources not changed');
  });

  it('a RestartContainer policy for a changed resource takes the pod out of endpoints', () => {
    const policy = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
    const o = tmpl([main(res('100m', '100Mi'), { resizePolicy: policy })]);
    const cpuOnly = tmpl([main(res('200m', '100Mi'), { resizePolicy: policy })]);
    const memory = tmpl([main(res('100m', '200Mi'), { resizePolicy: policy })]);
    assert.equal(planInPlaceUpdate(podOf(o), rev(o), rev(cpuOnly, 2), { ...ON, now: T0 })!.conditions, undefined);
    const c = planInPlaceUpdate(podOf(o), rev(o), rev(memory, 2), { ...ON, now: T0 })!.conditions!;
    assert.equal(c.find((x) => x.type === 'InPlaceUpdateReady')!.status, 'False');
  });

  it('with an image change the pod leaves endpoints and waits for both the image and the resize', () => {
    const imageToo = tmpl([main(res('200m', '200Mi'), { image: 'nginx:2' })]);
    const plan = planInPlaceUpdate(podOf(oldT), rev(oldT), rev(imageToo, 2), { ...ON, now: T0 })!;
    assert.equal(plan.conditions!.find((x) => x.type === 'InPlaceUpdateReady')!.status, 'False');
    const p = plan.pod;
    p.status!.containerStatuses![0] = { ...p.status!.containerStatuses![0], image: 'nginx:2', imageID: 'id-nginx:2' };
    assert.equal(checkInPlaceUpdateCompleted(p), 'container main resources not changed');
    p.status!.containerStatuses![0].resources = structuredClone(p.spec!.containers[0].resources);
    assert.equal(checkInPlaceUpdateCompleted(p), undefined);
  });

  it('containers of lower priority are resized in a later batch', () => {
    const prio = (n: number) => [{ name: 'KRUISE_CONTAINER_PRIORITY', value: String(n) }];
    const two = (r: Container['resources']) =>
      tmpl([
        { name: 'c1', image: 'a:1', env: prio(0), resources: r },
        { name: 'c2', image: 'b:1', env: prio(10), resources: r },
      ]);
    const o = two(res('100m', '100Mi'));
    const n = two(res('200m', '100Mi'));
    const first = planInPlaceUpdate(podOf(o), rev(o), rev(n, 2), { ...ON, now: T0 })!.pod;
    assert.deepEqual(
      first.spec!.containers.map((c) => c.resources!.requests!.cpu),
      ['100m', '200m'],
    );
    const state = getInPlaceUpdateState(first)!;
    assert.deepEqual(state.nextContainerResources, { c1: { requests: { cpu: '200m' } } });
    assert.match(checkInPlaceUpdateCompleted(first)!, /next batches/);
    // c2 resized and ready: the refresh resizes c1.
    first.status!.containerStatuses![1].resources = structuredClone(first.spec!.containers[1].resources);
    const next = planInPlaceRefresh(first, { now: T1 }).pod!;
    assert.deepEqual(
      next.spec!.containers.map((c) => c.resources!.requests!.cpu),
      ['200m', '200m'],
    );
    assert.equal(getInPlaceUpdateState(next)!.nextContainerResources, undefined);
  });
});
