// BroadcastJob planner, term for term against behaviour spec §7 (cases after upstream's
// broadcastjob_controller_test): node fitness, parallelism, completion, failure policies, pause,
// deadline, TTL, counters and conditions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import { classifyPods, newPod, planBroadcastJob, type BroadcastJob } from '../../../src/controllers/broadcastjob/plan.ts';
import { metaTime } from '../../../src/util/clock.ts';
import { targetNodeName } from '../../../src/util/nodefit.ts';

const NOW = Date.parse('2026-07-01T12:00:00Z');
const ago = (s: number) => metaTime(NOW - s * 1000);

type Spec = NonNullable<BroadcastJob['spec']>;
function job(spec: Partial<Spec> = {}, status?: BroadcastJob['status']): BroadcastJob {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'BroadcastJob',
    metadata: { name: 'bcj', namespace: 'ns', uid: 'bcj-uid', resourceVersion: '7' },
    spec: {
      template: { metadata: { labels: { app: 'x' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      completionPolicy: { type: 'Always' },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

const ALLOCATABLE = { cpu: '4', memory: '8Gi', pods: '110' };
function node(name: string, extra: Partial<NonNullable<Node['spec']>> = {}, labels: Record<string, string> = {}): Node {
  return { metadata: { name, labels }, spec: { ...extra }, status: { allocatable: ALLOCATABLE } } as Node;
}
const nodes = (n: number) => Array.from({ length: n }, (_, i) => node(`n${i}`));

function pod(j: BroadcastJob, nodeName: string, phase = 'Running', extra: Partial<Pod['status']> = {}): Pod {
  const p = newPod(j, nodeName);
  p.metadata.name = `bcj-${nodeName}`;
  p.metadata.uid = `uid-${nodeName}`;
  p.status = { phase, ...extra };
  return p;
}

const running = { phase: 'running' as const };

describe('node fitness and placement', () => {
  test('one pod per fitting node: a tainted, a cordoned and a too-small node are left out', () => {
    const ns = [
      ...nodes(3),
      node('tainted', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }),
      node('cordoned', { unschedulable: true }),
      { ...node('small'), status: { allocatable: { cpu: '100m', memory: '8Gi', pods: '110' } } } as Node,
    ];
    const j = job({
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '500m' } } }] },
      },
    });
    const plan = planBroadcastJob({ job: j, pods: [], nodes: ns, nowMs: NOW });
    assert.deepEqual(
      plan.createPods.map((p) => targetNodeName(p)),
      ['n0', 'n1', 'n2'],
    );
    assert.equal(plan.status?.desired, 3);
    assert.equal(plan.status?.active, 3);
  });

  test('tolerations admit tainted and cordoned nodes; nodeSelector and nodeName narrow them', () => {
    const ns = [
      node('a', { taints: [{ key: 'k', effect: 'NoExecute' }] }, { zone: 'z1' }),
      node('b', { unschedulable: true }, { zone: 'z1' }),
      node('c', {}, { zone: 'z2' }),
    ];
    const tolerate = [
      { key: 'k', operator: 'Exists' },
      { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
    ];
    const base = { restartPolicy: 'Never' as const, containers: [{ name: 'c', image: 'busybox' }] };
    const all = planBroadcastJob({ job: job({ template: { spec: { ...base, tolerations: tolerate } } }), pods: [], nodes: ns, nowMs: NOW });
    assert.deepEqual(
      all.createPods.map((p) => targetNodeName(p)),
      ['a', 'b', 'c'],
    );
    const z1 = planBroadcastJob({
      job: job({ template: { spec: { ...base, tolerations: tolerate, nodeSelector: { zone: 'z1' } } } }),
      pods: [],
      nodes: ns,
      nowMs: NOW,
    });
    assert.deepEqual(
      z1.createPods.map((p) => targetNodeName(p)),
      ['a', 'b'],
    );
    const named = planBroadcastJob({ job: job({ template: { spec: { ...base, nodeName: 'c' } } }), pods: [], nodes: ns, nowMs: NOW });
    assert.deepEqual(
      named.createPods.map((p) => targetNodeName(p)),
      ['c'],
    );
  });

  test('the pod: generateName, template labels plus the job labels, controller reference, node-name affinity', () => {
    const p = planBroadcastJob({ job: job(), pods: [], nodes: [node('n0')], nowMs: NOW }).createPods[0]!;
    assert.equal(p.metadata.generateName, 'bcj-');
    assert.deepEqual(p.metadata.labels, { app: 'x', 'broadcastjob-name': 'bcj', 'broadcastjob-controller-uid': 'bcj-uid' });
    assert.deepEqual(p.metadata.ownerReferences, [
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'BroadcastJob',
        name: 'bcj',
        uid: 'bcj-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, {
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n0'] }] }],
    });
  });

  test('--assign-bcj-pods-by-scheduler=false: pods are bound by spec.nodeName, the template affinity kept', () => {
    const p = planBroadcastJob({ job: job(), pods: [], nodes: [node('n0')], nowMs: NOW, bindByScheduler: false }).createPods[0]!;
    assert.equal(p.spec?.nodeName, 'n0');
    assert.equal(p.spec?.affinity, undefined);
  });

  test('a pod on a node it no longer fits is deleted (and counted failed, as upstream)', () => {
    const j = job({}, { ...running, startTime: ago(10) });
    const ns = [node('n0'), node('n1', { taints: [{ key: 'x', effect: 'NoExecute' }] })];
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0'), pod(j, 'n1')], nodes: ns, nowMs: NOW });
    assert.deepEqual(
      plan.deletePods.map((p) => p.metadata.name),
      ['bcj-n1'],
    );
    assert.equal(plan.status?.desired, 1);
    assert.equal(plan.status?.active, 1);
    assert.equal(plan.status?.failed, 1);
  });

  test('completionPolicy Never: a new node gets a pod even after every other pod succeeded', () => {
    const j = job({ completionPolicy: { type: 'Never' } }, { ...running, startTime: ago(10) });
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0', 'Succeeded'), pod(j, 'n1', 'Succeeded')], nodes: nodes(3), nowMs: NOW });
    assert.deepEqual(
      plan.createPods.map((p) => targetNodeName(p)),
      ['n2'],
    );
    assert.equal(plan.status?.phase, 'running');
    assert.equal(plan.status?.conditions, undefined);
  });
});

describe('parallelism', () => {
  const cases: Array<{ parallelism?: number | string; active: number; want: number }> = [
    { parallelism: undefined, active: 0, want: 6 },
    { parallelism: 2, active: 0, want: 2 },
    { parallelism: 2, active: 1, want: 1 },
    { parallelism: 2, active: 2, want: 0 },
    { parallelism: '50%', active: 0, want: 3 },
    { parallelism: '40%', active: 0, want: 3 }, // ceil(2.4) against desired 6
    { parallelism: '40%', active: 3, want: 0 },
  ];
  for (const c of cases) {
    test(`parallelism ${c.parallelism ?? 'unset'} with ${c.active} active → ${c.want} created`, () => {
      const j = job(c.parallelism === undefined ? {} : { parallelism: c.parallelism }, { ...running, startTime: ago(1) });
      const ns = nodes(6);
      const active = ns.slice(0, c.active).map((n) => pod(j, n.metadata.name!));
      const plan = planBroadcastJob({ job: j, pods: active, nodes: ns, nowMs: NOW });
      assert.equal(plan.createPods.length, c.want);
      assert.equal(plan.status?.active ?? c.active, c.active + c.want);
    });
  }

  test('more active pods than parallelism: an event, nothing created', () => {
    const j = job({ parallelism: 1 }, { ...running, startTime: ago(1) });
    const ns = nodes(3);
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0'), pod(j, 'n1')], nodes: ns, nowMs: NOW });
    assert.equal(plan.createPods.length, 0);
    assert.ok(plan.events.some((e) => e.reason === 'TooManyActivePods'));
  });
});

describe('status, completion and failure', () => {
  test('the first round sets startTime and phase running', () => {
    const plan = planBroadcastJob({ job: job({ parallelism: 1 }), pods: [], nodes: nodes(2), nowMs: NOW });
    assert.deepEqual(plan.status, { startTime: metaTime(NOW), phase: 'running', active: 1, failed: 0, succeeded: 0, desired: 2 });
  });

  test('an unchanged status is not written', () => {
    const j = job({ parallelism: 1 }, { startTime: ago(5), phase: 'running', active: 1, failed: 0, succeeded: 0, desired: 1 });
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0')], nodes: nodes(1), nowMs: NOW });
    assert.equal(plan.status, undefined);
    assert.equal(plan.createPods.length, 0);
  });

  test('Always: every desired node has a finished pod ⇒ completed, condition Complete, requeue for the TTL', () => {
    const j = job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 30 } }, { ...running, startTime: ago(60) });
    const ps = [pod(j, 'n0', 'Succeeded'), pod(j, 'n1', 'Succeeded'), pod(j, 'n2', 'Failed')];
    const plan = planBroadcastJob({
      job: { ...j, spec: { ...j.spec!, failurePolicy: { type: 'Continue' } } },
      pods: ps,
      nodes: nodes(3),
      nowMs: NOW,
    });
    assert.equal(plan.status?.phase, 'completed');
    assert.deepEqual(plan.status?.conditions, [
      {
        type: 'Complete',
        status: 'True',
        lastProbeTime: metaTime(NOW),
        lastTransitionTime: metaTime(NOW),
        reason: 'Complete',
        message: 'Job completed, 2 pods succeeded, 1 pods failed',
      },
    ]);
    assert.equal(plan.status?.completionTime, metaTime(NOW));
    assert.deepEqual([plan.status?.succeeded, plan.status?.failed, plan.status?.active, plan.status?.desired], [2, 1, 0, 3]);
    assert.equal(plan.requeueAfterMs, 31_000);
    assert.ok(
      plan.events.some((e) => e.reason === 'JobComplete' && e.message === 'Job ns/bcj is completed, 2 pods succeeded, 1 pods failed'),
    );
  });

  test('no desired node: the job waits (never completes on nothing)', () => {
    const plan = planBroadcastJob({ job: job(), pods: [], nodes: [], nowMs: NOW });
    assert.equal(plan.status?.phase, 'running');
    assert.equal(plan.status?.desired, 0);
  });

  test('FailFast (default): a failed pod fails the job, its active pods are deleted and counted failed', () => {
    const j = job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10 } }, { ...running, startTime: ago(5) });
    const ps = [pod(j, 'n0', 'Failed'), pod(j, 'n1'), pod(j, 'n2', 'Succeeded')];
    const plan = planBroadcastJob({ job: j, pods: ps, nodes: nodes(4), nowMs: NOW });
    assert.equal(plan.status?.phase, 'failed');
    assert.deepEqual(
      plan.deletePods.map((p) => p.metadata.name),
      ['bcj-n1'],
    );
    assert.equal(plan.createPods.length, 0);
    assert.deepEqual([plan.status?.failed, plan.status?.active, plan.status?.succeeded], [2, 0, 1]);
    const cond = plan.status?.conditions?.[0];
    assert.equal(cond?.type, 'Failed');
    assert.equal(cond?.message, 'failure policy is FailurePolicyTypeFailFast and failed pod is found');
    assert.equal(plan.status?.completionTime, metaTime(NOW));
    assert.equal(plan.requeueAfterMs, 11_000);
  });

  test('a failed job only refreshes its counters', () => {
    const j = job(
      { completionPolicy: { type: 'Never' } },
      { phase: 'failed', startTime: ago(5), active: 0, failed: 1, succeeded: 0, desired: 2 },
    );
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0', 'Failed')], nodes: nodes(2), nowMs: NOW });
    assert.equal(plan.createPods.length, 0);
    assert.equal(plan.status, undefined);
  });

  test('Continue: failed pods are ignored and the job carries on', () => {
    const j = job({ failurePolicy: { type: 'Continue' } }, { ...running, startTime: ago(5) });
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0', 'Failed')], nodes: nodes(2), nowMs: NOW });
    assert.equal(plan.status?.phase, 'running');
    assert.deepEqual(
      plan.createPods.map((p) => targetNodeName(p)),
      ['n1'],
    );
  });

  test('Pause: a failed pod pauses the job (spec.paused=true, phase paused)', () => {
    const j = job({ failurePolicy: { type: 'Pause' } }, { ...running, startTime: ago(5) });
    const plan = planBroadcastJob({ job: j, pods: [pod(j, 'n0', 'Failed')], nodes: nodes(2), nowMs: NOW });
    assert.equal(plan.pauseJob, true);
    assert.equal(plan.status?.phase, 'paused');
    assert.equal(plan.createPods.length, 0);
    assert.ok(plan.events.some((e) => e.reason === 'Paused'));
  });

  test('restartLimit: an OnFailure pod restarted more often is failed', () => {
    const p = (restarts: number): Pod => ({
      metadata: { name: `p${restarts}` },
      spec: { restartPolicy: 'OnFailure', containers: [] },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', restartCount: restarts }] },
    });
    const r = classifyPods(2, [p(2), p(3)]);
    assert.deepEqual(
      r.active.map((x) => x.metadata.name),
      ['p2'],
    );
    assert.deepEqual(
      r.failed.map((x) => x.metadata.name),
      ['p3'],
    );
    const never: Pod = {
      metadata: { name: 'never' },
      spec: { restartPolicy: 'Never', containers: [] },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', restartCount: 0, state: { terminated: { exitCode: 2 } } }] },
    };
    assert.deepEqual(
      classifyPods(0, [never]).failed.map((x) => x.metadata.name),
      ['never'],
    );
    const deleting: Pod = { metadata: { name: 'd', deletionTimestamp: ago(1) }, status: { phase: 'Running' } };
    assert.deepEqual(classifyPods(0, [deleting]), { active: [], failed: [], succeeded: [] });
  });

  test('activeDeadlineSeconds (Always): past it the job fails with DeadlineExceeded; before, a requeue at the deadline', () => {
    const policy = { type: 'Always' as const, activeDeadlineSeconds: 60 };
    const before = planBroadcastJob({
      job: job({ completionPolicy: policy }, { ...running, startTime: ago(20) }),
      pods: [],
      nodes: nodes(1),
      nowMs: NOW,
    });
    assert.equal(before.requeueAfterMs, 40_000);
    assert.equal(before.status?.phase, 'running');
    const j = job({ completionPolicy: policy }, { ...running, startTime: ago(60) });
    const past = planBroadcastJob({ job: j, pods: [pod(j, 'n0')], nodes: nodes(1), nowMs: NOW });
    assert.equal(past.status?.phase, 'failed');
    assert.equal(past.status?.conditions?.[0]?.message, 'Job ns/bcj was active longer than specified deadline');
    assert.ok(past.events.some((e) => e.reason === 'DeadlineExceeded'));
    assert.deepEqual(
      past.deletePods.map((p) => p.metadata.name),
      ['bcj-n0'],
    );
    const never = planBroadcastJob({
      job: job({ completionPolicy: { ...policy, type: 'Never' } }, { ...running, startTime: ago(600) }),
      pods: [],
      nodes: nodes(1),
      nowMs: NOW,
    });
    assert.equal(never.status?.phase, 'running');
  });
});

describe('paused and TTL', () => {
  test('paused: phase paused, nothing created; unpaused: running again with a Continue event', () => {
    const paused = planBroadcastJob({
      job: job({ paused: true }, { ...running, startTime: ago(5) }),
      pods: [],
      nodes: nodes(2),
      nowMs: NOW,
    });
    assert.equal(paused.status?.phase, 'paused');
    assert.equal(paused.createPods.length, 0);
    const resumed = planBroadcastJob({ job: job({}, { phase: 'paused', startTime: ago(5) }), pods: [], nodes: nodes(2), nowMs: NOW });
    assert.equal(resumed.status?.phase, 'running');
    assert.equal(resumed.createPods.length, 2);
    assert.ok(resumed.events.some((e) => e.reason === 'Continue'));
  });

  test('a finished job is deleted ttlSecondsAfterFinished after completion, and only waits before', () => {
    const finished = (completedAgo: number) =>
      job(
        { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 30 } },
        { phase: 'completed', completionTime: ago(completedAgo), conditions: [{ type: 'Complete', status: 'True' }] },
      );
    const early = planBroadcastJob({ job: finished(10), pods: [], nodes: nodes(1), nowMs: NOW });
    assert.deepEqual([early.deleteJob, early.requeueAfterMs, early.status, early.createPods.length], [false, 20_000, undefined, 0]);
    const late = planBroadcastJob({ job: finished(30), pods: [], nodes: nodes(1), nowMs: NOW });
    assert.equal(late.deleteJob, true);
    const kept = planBroadcastJob({
      job: { ...finished(1000), spec: { ...finished(0).spec!, completionPolicy: { type: 'Always' } } },
      pods: [],
      nodes: nodes(1),
      nowMs: NOW,
    });
    assert.deepEqual([kept.deleteJob, kept.requeueAfterMs], [false, undefined]);
  });
});
