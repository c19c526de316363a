import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import type { PodProbeMarker } from '../../../src/apis/apps/podprobemarker.ts';
import type { Stored } from '../../../src/apis/core-objects.ts';
import { planNodePodProbe, planPodMarks, wantsNodePodProbe, type StoredNPP } from '../../../src/controllers/nodepodprobe/plan.ts';
import { reconcileNodePodProbe } from '../../../src/controllers/nodepodprobe/controller.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import { logger } from '../../../src/runtime/log.ts';

type PPM = Stored<PodProbeMarker>;
const T1 = '2025-01-01T00:00:01Z';
const T2 = '2025-01-01T00:00:02Z';

const marker = (name: string, probes: NonNullable<PPM['spec']>['probes'], deleting = false): PPM => ({
  metadata: { name, namespace: 'ns', ...(deleting ? { deletionTimestamp: T1 } : {}) },
  spec: { selector: { matchLabels: { a: 'b' } }, probes },
});
const healthy = marker('m', [
  {
    name: 'p',
    containerName: 'main',
    probe: { exec: { command: ['true'] } },
    podConditionType: 'game/ok',
    markerPolicy: [
      { state: 'Succeeded', labels: { state: 'ok', shared: 'yes' }, annotations: { since: 'x' } },
      { state: 'Failed', labels: { state: 'bad', failing: 'true' } },
    ],
  },
  { name: 'q', containerName: 'main', probe: { exec: { command: ['true'] } }, podConditionType: 'game/ok' },
]);
const markers: Record<string, PPM> = {
  m: healthy,
  gone: marker('gone', [{ name: 'p', containerName: 'c', probe: {}, podConditionType: 'x' }], true),
};
const getMarker = (_ns: string, n: string) => markers[n];

function pod(
  o: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    cond?: { status: string; message?: string };
    uid?: string;
    phase?: string;
  } = {},
): Pod {
  return {
    metadata: {
      name: 'pod',
      namespace: 'ns',
      uid: o.uid ?? 'u1',
      labels: o.labels ?? {},
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: { nodeName: 'n1', containers: [] },
    status: { phase: o.phase ?? 'Running', conditions: o.cond ? [{ type: 'game/ok', ...o.cond, lastTransitionTime: T1 }] : [] },
  };
}
const status = (...states: Array<[string, 'Succeeded' | 'Failed' | 'Unknown', string?]>) => ({
  name: 'pod',
  namespace: 'ns',
  uid: 'u1',
  probeStates: states.map(([name, state, message]) => ({
    name,
    state,
    lastProbeTime: T2,
    lastTransitionTime: T2,
    ...(message ? { message } : {}),
  })),
});

describe('planPodMarks (upstream updatePodProbeStatus)', () => {
  test('Succeeded: condition True, the Succeeded policy set, the Failed policy keys removed only where present', () => {
    const patch = planPodMarks(pod({ labels: { failing: 'true' } }), status(['m#p', 'Succeeded']), getMarker);
    assert.deepEqual(patch, {
      labels: { failing: null, state: 'ok', shared: 'yes' },
      annotations: { since: 'x' },
      conditions: [{ type: 'game/ok', status: 'True', lastProbeTime: T2, lastTransitionTime: T2 }],
    });
  });
  test('Failed: condition False with the message, the Succeeded keys removed, the Failed set (a shared key wins for the matching policy)', () => {
    const p = pod({ labels: { state: 'ok', shared: 'yes' }, annotations: { since: 'x' }, cond: { status: 'True' } });
    assert.deepEqual(planPodMarks(p, status(['m#p', 'Failed', 'exit 1']), getMarker), {
      labels: { state: 'bad', shared: null, failing: 'true' },
      annotations: { since: null },
      conditions: [{ type: 'game/ok', status: 'False', lastProbeTime: T2, lastTransitionTime: T2, message: 'exit 1' }],
    });
  });
  test('nothing differs: no patch (an unchanged pod is never written)', () => {
    const p = pod({ labels: { state: 'ok', shared: 'yes' }, annotations: { since: 'x' }, cond: { status: 'True' } });
    assert.equal(planPodMarks(p, status(['m#p', 'Succeeded']), getMarker), undefined);
  });
  test('the condition is rewritten only when status or message changes (not for a newer probe time)', () => {
    const p = pod({ labels: { state: 'bad', failing: 'true' }, cond: { status: 'False', message: 'exit 1' } });
    assert.equal(planPodMarks(p, status(['m#p', 'Failed', 'exit 1']), getMarker), undefined);
    assert.deepEqual(planPodMarks(p, status(['m#p', 'Failed', 'exit 2']), getMarker)?.conditions?.[0].message, 'exit 2');
  });
  test('Unknown: condition False; keys of every policy removed, none set', () => {
    const p = pod({ labels: { state: 'ok', shared: 'yes' }, cond: { status: 'True' } });
    assert.deepEqual(planPodMarks(p, status(['m#p', 'Unknown']), getMarker), {
      labels: { state: null, shared: null },
      conditions: [{ type: 'game/ok', status: 'False', lastProbeTime: T2, lastTransitionTime: T2 }],
    });
  });
  test('the first state per condition type wins', () => {
    const patch = planPodMarks(pod(), status(['m#q', 'Failed'], ['m#p', 'Succeeded']), getMarker);
    assert.deepEqual(
      patch?.conditions?.map((c) => c.status),
      ['False'],
    );
  });
  test('states of markers gone, being deleted, or probes they no longer have are ignored', () => {
    assert.equal(
      planPodMarks(pod(), status(['nope#p', 'Succeeded'], ['gone#p', 'Succeeded'], ['m#zzz', 'Succeeded']), getMarker),
      undefined,
    );
  });
});

const readyNode = (name: string, o: { ready?: boolean; vk?: boolean; deleting?: boolean } = {}): Node => ({
  metadata: { name, labels: o.vk ? { type: 'virtual-kubelet' } : {}, ...(o.deleting ? { deletionTimestamp: T1 } : {}) },
  status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
});

describe('planNodePodProbe', () => {
  const npp = (o: Partial<StoredNPP> = {}): StoredNPP => ({
    metadata: { name: 'n1', uid: 'npp-uid', resourceVersion: '3' },
    spec: {},
    ...o,
  });
  const base = { name: 'n1', getMarker };
  test('created for a Ready node only (not virtual-kubelet, not being deleted)', () => {
    assert.equal(wantsNodePodProbe(readyNode('n1')), true);
    assert.equal(wantsNodePodProbe(readyNode('n1', { ready: false })), false);
    assert.equal(wantsNodePodProbe(readyNode('n1', { vk: true })), false);
    assert.equal(wantsNodePodProbe(readyNode('n1', { deleting: true })), false);
    assert.deepEqual(planNodePodProbe({ ...base, node: readyNode('n1'), npp: undefined, getPod: () => undefined }), { action: 'create' });
    assert.deepEqual(planNodePodProbe({ ...base, node: undefined, npp: undefined, getPod: () => undefined }), { action: 'none' });
  });
  test('deleted with its node', () => {
    assert.deepEqual(planNodePodProbe({ ...base, node: undefined, npp: npp(), getPod: () => undefined }), { action: 'delete' });
    assert.deepEqual(planNodePodProbe({ ...base, node: readyNode('n1', { deleting: true }), npp: npp(), getPod: () => undefined }), {
      action: 'delete',
    });
  });
  test('entries of gone, finished or replaced pods are dropped; live pods get their marks', () => {
    const live = pod();
    const entry = (name: string, uid: string) => ({
      name,
      namespace: 'ns',
      uid,
      IP: '1.2.3.4',
      probes: [{ name: 'm#p', containerName: 'main', probe: {} }],
    });
    const pods: Record<string, Pod> = {
      pod: live,
      done: { ...pod({ uid: 'u2', phase: 'Succeeded' }), metadata: { name: 'done', namespace: 'ns', uid: 'u2' } },
      replaced: { ...pod({ uid: 'new' }), metadata: { name: 'replaced', namespace: 'ns', uid: 'new' } },
    };
    const plan = planNodePodProbe({
      ...base,
      node: readyNode('n1'),
      npp: npp({
        spec: { podProbes: [entry('pod', 'u1'), entry('gone', 'u0'), entry('done', 'u2'), entry('replaced', 'old')] },
        status: { podProbeStatuses: [status(['m#p', 'Succeeded'])] },
      }),
      getPod: (_ns, n) => pods[n],
    });
    assert.equal(plan.action, 'sync');
    if (plan.action !== 'sync') return;
    assert.deepEqual(
      plan.spec?.podProbes?.map((e) => e.name),
      ['pod'],
    );
    assert.deepEqual(
      plan.pods.map((x) => [x.pod.metadata.name, x.patch.labels?.state]),
      [['pod', 'ok']],
    );
  });
  test('settled: nothing to write', () => {
    const settled = pod({ labels: { state: 'ok', shared: 'yes' }, annotations: { since: 'x' }, cond: { status: 'True' } });
    const plan = planNodePodProbe({
      ...base,
      node: readyNode('n1'),
      npp: npp({
        spec: { podProbes: [{ name: 'pod', namespace: 'ns', uid: 'u1', IP: '', probes: [] }] },
        status: { podProbeStatuses: [status(['m#p', 'Succeeded'])] },
      }),
      getPod: () => settled,
    });
    assert.deepEqual(plan, { action: 'sync', pods: [] });
  });
});

describe('reconcileNodePodProbe (executor)', () => {
  test('one strategic-merge patch of pods/status per pod, holding only what differs', async () => {
    const calls: unknown[] = [];
    const client = {
      patch: async (_t: unknown, name: string, body: unknown, opts: unknown) => void calls.push({ name, body, opts }),
    };
    const p = pod({ labels: { failing: 'true' } });
    const res = await reconcileNodePodProbe('n1', {
      cache: {
        getNode: () => readyNode('n1'),
        getNodePodProbe: () => ({
          metadata: { name: 'n1', uid: 'x', resourceVersion: '3' },
          spec: { podProbes: [{ name: 'pod', namespace: 'ns', uid: 'u1', IP: '', probes: [] }] },
          status: { podProbeStatuses: [status(['m#p', 'Succeeded'])] },
        }),
        getPod: () => p,
        getMarker,
      },
      client: client as never,
      log: logger.child({}, { level: 'silent' }),
      resourceVersions: new ResourceVersionExpectations(),
    });
    assert.deepEqual(res, {});
    assert.deepEqual(calls, [
      {
        name: 'pod',
        body: {
          metadata: { labels: { failing: null, state: 'ok', shared: 'yes' }, annotations: { since: 'x' } },
          status: { conditions: [{ type: 'game/ok', status: 'True', lastProbeTime: T2, lastTransitionTime: T2 }] },
        },
        opts: { namespace: 'ns', patchType: 'application/strategic-merge-patch+json', subresource: 'status' },
      },
    ]);
  });
});
