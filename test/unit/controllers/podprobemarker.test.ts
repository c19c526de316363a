import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import {
  containerProbe,
  matchingPods,
  planNodeProbes,
  planPodProbeMarker,
  planServerlessMarks,
  stateOfConditionStatus,
  type StoredNPP,
  type StoredPPM,
} from '../../../src/controllers/podprobemarker/plan.ts';
import {
  changedConditionTypes,
  makePodProbeMarkerHandlers,
  reconcilePodProbeMarker,
} from '../../../src/controllers/podprobemarker/controller.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import { StatusError } from '../../../src/runtime/errors.ts';
import { logger } from '../../../src/runtime/log.ts';

const FINALIZER = 'kruise.io/node-pod-probe-cleanup';
const exec = { exec: { command: ['test', '-f', 'ready'] } };

function ppm(
  o: {
    name?: string;
    ns?: string;
    finalizer?: boolean;
    deleting?: boolean;
    probes?: NonNullable<StoredPPM['spec']>['probes'];
    status?: StoredPPM['status'];
    generation?: number;
  } = {},
): StoredPPM {
  return {
    metadata: {
      name: o.name ?? 'm',
      namespace: o.ns ?? 'ns',
      generation: o.generation ?? 1,
      ...(o.finalizer === false ? {} : { finalizers: [FINALIZER] }),
      ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: {
      selector: { matchLabels: { app: 'a' } },
      probes: o.probes ?? [{ name: 'p', containerName: 'main', probe: exec, podConditionType: 'game/ok' }],
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

function pod(
  name: string,
  o: {
    node?: string;
    ns?: string;
    initialized?: boolean;
    phase?: string;
    deleting?: boolean;
    ip?: string;
    ports?: Array<{ name: string; containerPort: number }>;
  } = {},
): Pod {
  return {
    metadata: { name, namespace: o.ns ?? 'ns', uid: `uid-${name}`, ...(o.deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
    spec: {
      nodeName: o.node === undefined ? 'n1' : o.node,
      containers: [{ name: 'main', image: 'x', ...(o.ports ? { ports: o.ports } : {}) }],
    },
    status: {
      phase: o.phase ?? 'Running',
      podIP: o.ip ?? `10.0.0.${name.length}`,
      conditions: [{ type: 'Initialized', status: o.initialized === false ? 'False' : 'True' }],
    },
  };
}

const node = (name: string, labels: Record<string, string> = {}): Node => ({ metadata: { name, labels } });
const nodes: Record<string, Node> = { n1: node('n1'), n2: node('n2'), vk: node('vk', { type: 'virtual-kubelet' }) };
const getNode = (n: string) => nodes[n];
const npp = (name: string, podProbes: NonNullable<StoredNPP['spec']>['podProbes'] = []): StoredNPP => ({
  metadata: { name, resourceVersion: '5' },
  spec: { podProbes },
});
const entry = (p: Pod, probes: Array<{ name: string }>) => ({
  name: p.metadata.name!,
  namespace: p.metadata.namespace!,
  uid: p.metadata.uid!,
  IP: p.status!.podIP!,
  probes: probes.map((x) => ({ name: x.name, containerName: 'main', probe: exec })),
});

describe('matchingPods (upstream getMatchingPods)', () => {
  test('active, Initialized, on an existing node; virtual-kubelet pods apart', () => {
    const m = matchingPods(
      [
        pod('ok'),
        pod('unscheduled', { node: '' }),
        pod('not-init', { initialized: false }),
        pod('done', { phase: 'Succeeded' }),
        pod('deleting', { deleting: true }),
        pod('gone-node', { node: 'nope' }),
        pod('serverless', { node: 'vk' }),
      ],
      getNode,
    );
    assert.deepEqual(
      m.normal.map((p) => p.metadata.name),
      ['ok'],
    );
    assert.deepEqual(
      m.serverless.map((p) => p.metadata.name),
      ['serverless'],
    );
  });
});

describe('containerProbe', () => {
  test('named tcp/http ports resolve against the container; unknown names are errors', () => {
    const p = pod('a', { ports: [{ name: 'web', containerPort: 8080 }] });
    const tcp = containerProbe('m', { name: 't', containerName: 'main', probe: { tcpSocket: { port: 'web' } } }, p);
    assert.deepEqual(tcp, { name: 'm#t', containerName: 'main', probe: { tcpSocket: { port: 8080 } } });
    const http = containerProbe('m', { name: 'h', containerName: 'main', probe: { httpGet: { port: 'web', path: '/hz' } } }, p);
    assert.deepEqual(http, { name: 'm#h', containerName: 'main', probe: { httpGet: { port: 8080, path: '/hz' } } });
    const bad = containerProbe('m', { name: 'h', containerName: 'main', probe: { httpGet: { port: 'nope' } } }, p);
    assert.match((bad as { error: string }).error, /Failed to extract port for container: main in pod: ns\/a/);
  });
});

describe('planNodeProbes', () => {
  const a = pod('a');
  const b = pod('b');
  test('adds an entry per matched pod with <marker>#<probe>', () => {
    const { spec } = planNodeProbes(npp('n1'), ppm(), [a]);
    assert.deepEqual(spec?.podProbes, [entry(a, [{ name: 'm#p' }])]);
  });
  test('unchanged: no write', () => {
    assert.equal(planNodeProbes(npp('n1', [entry(a, [{ name: 'm#p' }])]), ppm(), [a]).spec, undefined);
  });
  test("keeps other markers' probes, updates ours in place, drops probes the marker no longer has", () => {
    const cur = npp('n1', [entry(a, [{ name: 'other#x' }, { name: 'm#old' }, { name: 'm#p' }])]);
    const { spec } = planNodeProbes(cur, ppm(), [a]);
    assert.deepEqual(
      spec?.podProbes?.[0].probes?.map((p) => p.name),
      ['other#x', 'm#p'],
    );
  });
  test('a pod no longer matched loses our probes; the entry goes when none are left', () => {
    const cur = npp('n1', [entry(a, [{ name: 'm#p' }]), entry(b, [{ name: 'm#p' }, { name: 'other#x' }])]);
    const { spec } = planNodeProbes(cur, ppm(), []);
    assert.deepEqual(spec?.podProbes, [entry(b, [{ name: 'other#x' }])]);
  });
  test('same-named marker in another namespace and prefix look-alikes are not ours', () => {
    const elsewhere = pod('c', { ns: 'other' });
    const cur = npp('n1', [entry(elsewhere, [{ name: 'm#p' }]), entry(a, [{ name: 'mm#p' }])]);
    const { spec } = planNodeProbes(cur, ppm(), []);
    assert.equal(spec, undefined);
  });
  test('a recreated pod (same name, new uid) gets a new entry; the old one loses our probes', () => {
    const old = { ...entry(a, [{ name: 'm#p' }]), uid: 'old-uid' };
    const { spec } = planNodeProbes(npp('n1', [old]), ppm(), [a]);
    assert.deepEqual(spec?.podProbes, [entry(a, [{ name: 'm#p' }])]);
  });
  test('an empty IP is filled in from the pod', () => {
    const { spec } = planNodeProbes(npp('n1', [{ ...entry(a, [{ name: 'm#p' }]), IP: '' }]), ppm(), [a]);
    assert.equal(spec?.podProbes?.[0].IP, a.status!.podIP);
  });
});

describe('planPodProbeMarker', () => {
  const a = pod('a');
  const b = pod('b', { node: 'n2' });
  const input = (m: StoredPPM, npps = [npp('n1'), npp('n2')]) => ({
    ppm: m,
    pods: [a, b],
    getNode,
    nodePodProbes: npps,
    serverless: false,
  });
  test('first round: finalizer, every node, status', () => {
    const plan = planPodProbeMarker(input(ppm({ finalizer: false })));
    assert.equal(plan.addFinalizer, true);
    assert.deepEqual(
      plan.nodeProbes.map((x) => [x.npp.metadata.name, x.spec.podProbes?.map((e) => e.name)]),
      [
        ['n1', ['a']],
        ['n2', ['b']],
      ],
    );
    assert.deepEqual(plan.status, { observedGeneration: 1, matchedPods: 2 });
  });
  test('a node without its NodePodProbe yet is skipped (picked up when it appears)', () => {
    const plan = planPodProbeMarker(input(ppm(), [npp('n1')]));
    assert.deepEqual(
      plan.nodeProbes.map((x) => x.npp.metadata.name),
      ['n1'],
    );
  });
  test('settled: nothing to write', () => {
    const settled = [npp('n1', [entry(a, [{ name: 'm#p' }])]), npp('n2', [entry(b, [{ name: 'm#p' }])])];
    const plan = planPodProbeMarker(input(ppm({ status: { observedGeneration: 1, matchedPods: 2 } }), settled));
    assert.deepEqual(plan, { addFinalizer: false, removeFinalizer: false, nodeProbes: [], serverlessMarks: [], errors: [] });
  });
  test('matchedPods counts serverless pods too; a new generation is observed', () => {
    const plan = planPodProbeMarker({
      ...input(ppm({ generation: 2, status: { observedGeneration: 1, matchedPods: 2 } })),
      pods: [a, b, pod('s', { node: 'vk' })],
    });
    assert.deepEqual(plan.status, { observedGeneration: 2, matchedPods: 3 });
  });
  test('deleting: our probes leave every NodePodProbe, then the finalizer; no status', () => {
    const settled = [npp('n1', [entry(a, [{ name: 'm#p' }])]), npp('n2', [entry(b, [{ name: 'm#p' }, { name: 'x#y' }])])];
    const plan = planPodProbeMarker(input(ppm({ deleting: true }), settled));
    assert.equal(plan.removeFinalizer, true);
    assert.equal(plan.status, undefined);
    assert.deepEqual(
      plan.nodeProbes.map((x) => [x.npp.metadata.name, x.spec.podProbes]),
      [
        ['n1', []],
        ['n2', [entry(b, [{ name: 'x#y' }])]],
      ],
    );
  });
  test('deleting without our finalizer: nothing', () => {
    const plan = planPodProbeMarker(input(ppm({ deleting: true, finalizer: false })));
    assert.deepEqual(plan, { addFinalizer: false, removeFinalizer: false, nodeProbes: [], serverlessMarks: [], errors: [] });
  });
});

// Serverless mode (gate EnablePodProbeMarkerOnServerless): the provider writes the probe's result
// as the pod condition podConditionType; the marker applies the markerPolicy from it.
type MarkerProbe = NonNullable<StoredPPM['spec']>['probes'][number];
const markedProbe: MarkerProbe = {
  name: 'p',
  containerName: 'main',
  probe: exec,
  podConditionType: 'game/ok',
  markerPolicy: [
    { state: 'Succeeded', labels: { ready: 'yes' }, annotations: { 'game/state': 'up' } },
    { state: 'Failed', labels: { broken: 'yes' } },
  ],
};
const withMeta = (
  p: Pod,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> },
  conditions: Array<[string, string]> = [],
): Pod => ({
  ...p,
  metadata: { ...p.metadata, ...meta },
  status: { ...p.status, conditions: [...(p.status?.conditions ?? []), ...conditions.map(([type, status]) => ({ type, status }))] },
});

describe('stateOfConditionStatus (IsEqualPodConditionStatus)', () => {
  for (const [status, state] of [
    ['True', 'Succeeded'],
    ['False', 'Failed'],
    ['Unknown', 'Unknown'],
    ['', 'Unknown'],
  ] as const) {
    test(`${JSON.stringify(status)} → ${state}`, () => assert.equal(stateOfConditionStatus(status), state));
  }
});

describe('planServerlessMarks', () => {
  const m = ppm({ probes: [markedProbe] });
  const vk = pod('s', { node: 'vk' });
  const cases: Array<{ name: string; pod: Pod; marker?: StoredPPM; want: ReturnType<typeof planServerlessMarks> }> = [
    { name: 'no condition yet: nothing', pod: vk, want: undefined },
    {
      name: 'True: the Succeeded policy set, the Failed keys absent so not named',
      pod: withMeta(vk, {}, [['game/ok', 'True']]),
      want: { labels: { ready: 'yes' }, annotations: { 'game/state': 'up' } },
    },
    {
      name: 'False after True: Succeeded keys removed, Failed set',
      pod: withMeta(vk, { labels: { ready: 'yes', app: 'a' }, annotations: { 'game/state': 'up' } }, [['game/ok', 'False']]),
      want: { labels: { ready: null, broken: 'yes' }, annotations: { 'game/state': null } },
    },
    {
      name: 'Unknown: every policy key removed, none set',
      pod: withMeta(vk, { labels: { broken: 'yes' } }, [['game/ok', 'Unknown']]),
      want: { labels: { broken: null } },
    },
    {
      name: 'settled: nothing',
      pod: withMeta(vk, { labels: { ready: 'yes' }, annotations: { 'game/state': 'up' } }, [['game/ok', 'True']]),
      want: undefined,
    },
    {
      name: 'a probe without podConditionType or without markerPolicy marks nothing',
      pod: withMeta(vk, {}, [['game/ok', 'True']]),
      marker: ppm({
        probes: [
          { name: markedProbe.name, containerName: 'main', probe: exec, markerPolicy: markedProbe.markerPolicy },
          { ...markedProbe, name: 'q', markerPolicy: [] },
        ],
      }),
      want: undefined,
    },
    {
      name: 'two probes, two conditions: each applies its own policy',
      pod: withMeta(vk, {}, [
        ['game/ok', 'True'],
        ['game/db', 'False'],
      ]),
      marker: ppm({
        probes: [
          markedProbe,
          { ...markedProbe, name: 'db', podConditionType: 'game/db', markerPolicy: [{ state: 'Failed', annotations: { db: 'down' } }] },
        ],
      }),
      want: { labels: { ready: 'yes' }, annotations: { 'game/state': 'up', db: 'down' } },
    },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(planServerlessMarks(c.pod, c.marker ?? m), c.want));
});

describe('planPodProbeMarker, serverless mode', () => {
  const m = ppm({ probes: [markedProbe], status: { observedGeneration: 1, matchedPods: 2 } });
  const s = withMeta(pod('s', { node: 'vk' }), {}, [['game/ok', 'True']]);
  const a = withMeta(pod('a'), {}, [['game/ok', 'True']]);
  const input = (serverless: boolean) => ({
    ppm: m,
    pods: [a, s],
    getNode,
    nodePodProbes: [npp('n1', [entry(a, [{ name: 'm#p' }])])],
    serverless,
  });
  test('gate on: the pod on the virtual-kubelet node is marked, never listed in a NodePodProbe', () => {
    const plan = planPodProbeMarker(input(true));
    assert.deepEqual(
      plan.serverlessMarks.map((x) => [x.pod.metadata.name, x.patch]),
      [['s', { labels: { ready: 'yes' }, annotations: { 'game/state': 'up' } }]],
    );
    assert.deepEqual(plan.nodeProbes, []);
    assert.equal(plan.status, undefined);
  });
  test('gate off: serverless pods are only counted', () => {
    assert.deepEqual(planPodProbeMarker(input(false)).serverlessMarks, []);
  });
  test('being deleted: no marks', () => {
    const plan = planPodProbeMarker({ ...input(true), ppm: ppm({ probes: [markedProbe], deleting: true }) });
    assert.deepEqual(plan.serverlessMarks, []);
  });
});

describe('reconcilePodProbeMarker (executor)', () => {
  const log = logger.child({}, { level: 'silent' });
  const setup = (m: StoredPPM, npps: StoredNPP[], conflictOn?: string) => {
    const calls: string[] = [];
    let rv = 10;
    const answer = (what: string, obj: { metadata?: object }) => {
      calls.push(what);
      if (conflictOn && what.startsWith(conflictOn))
        throw new StatusError(
          { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 409, reason: 'Conflict', message: 'x' } as never,
          409,
        );
      return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
    };
    const client = {
      patch: async (_t: unknown, name: string, body: { metadata: { finalizers: string[] } }) =>
        answer(`patch ${name} finalizers=${body.metadata.finalizers.join(',')}`, {
          ...m,
          metadata: { ...m.metadata, finalizers: body.metadata.finalizers },
        }),
      update: async (_t: unknown, obj: StoredNPP) =>
        answer(`update npp ${obj.metadata.name} ${obj.spec?.podProbes?.map((e) => e.name).join(',')}`, obj),
      updateStatus: async (_t: unknown, obj: StoredPPM) => answer(`status ${JSON.stringify(obj.status)}`, obj),
    };
    const deps = {
      cache: {
        getMarker: () => m,
        listPods: () => [pod('a')],
        getNode,
        listNodePodProbes: () => npps,
      },
      client: client as never,
      recorder: { event() {} },
      log,
      resourceVersions: new ResourceVersionExpectations(),
      serverless: false,
    };
    return { calls, run: () => reconcilePodProbeMarker('ns/m', deps) };
  };
  test('finalizer, then the NodePodProbe, then status', async () => {
    const { calls, run } = setup(ppm({ finalizer: false }), [npp('n1')]);
    assert.deepEqual(await run(), {});
    assert.deepEqual(calls, [`patch m finalizers=${FINALIZER}`, 'update npp n1 a', 'status {"observedGeneration":1,"matchedPods":1}']);
  });
  test('a NodePodProbe write that loses a race ends the round with a requeue', async () => {
    const { calls, run } = setup(ppm(), [npp('n1')], 'update');
    assert.deepEqual(await run(), { requeueAfterMs: 1000 });
    assert.deepEqual(calls, ['update npp n1 a']);
  });
  test('deleting: probes out, then the finalizer released', async () => {
    const { calls, run } = setup(ppm({ deleting: true }), [npp('n1', [entry(pod('a'), [{ name: 'm#p' }])])]);
    assert.deepEqual(await run(), {});
    assert.deepEqual(calls, ['update npp n1 ', 'patch m finalizers=']);
  });
});

describe('reconcilePodProbeMarker (executor), serverless mode', () => {
  const log = logger.child({}, { level: 'silent' });
  const run = async (pods: Pod[], notFound = false) => {
    const calls: string[] = [];
    const resourceVersions = new ResourceVersionExpectations();
    const m = ppm({ probes: [markedProbe], status: { observedGeneration: 1, matchedPods: pods.length } });
    const client = {
      patch: async (_t: unknown, name: string, body: unknown, opts: { namespace?: string }) => {
        calls.push(`patch ${opts.namespace}/${name} ${JSON.stringify(body)}`);
        if (notFound)
          throw new StatusError(
            { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'x' } as never,
            404,
          );
        return { metadata: { name, uid: `uid-${name}`, resourceVersion: '99' } };
      },
      update: async () => assert.fail('no NodePodProbe write expected'),
      updateStatus: async () => assert.fail('no status write expected'),
    };
    const deps = {
      cache: { getMarker: () => m, listPods: () => pods, getNode, listNodePodProbes: () => [] },
      client: client as never,
      recorder: { event() {} },
      log,
      resourceVersions,
      serverless: true,
    };
    return { calls, result: await reconcilePodProbeMarker('ns/m', deps), resourceVersions };
  };
  test('one merge patch naming only the changed keys; the patched version is expected', async () => {
    const s = withMeta(pod('s', { node: 'vk' }), { labels: { broken: 'yes' } }, [['game/ok', 'True']]);
    const { calls, result, resourceVersions } = await run([s]);
    assert.deepEqual(result, {});
    assert.deepEqual(calls, [
      `patch ns/s ${JSON.stringify({ metadata: { labels: { broken: null, ready: 'yes' }, annotations: { 'game/state': 'up' } } })}`,
    ]);
    // The cache still holds the pod as before the patch: the next round waits for the patched one.
    assert.equal(resourceVersions.isSatisfied({ metadata: { uid: 'uid-s', resourceVersion: '98' } }).satisfied, false);
  });
  test('a pod gone meanwhile is no failure', async () => {
    const s = withMeta(pod('s', { node: 'vk' }), {}, [['game/ok', 'False']]);
    const { result } = await run([s], true);
    assert.deepEqual(result, {});
  });
});

describe('changedConditionTypes (diffPodConditions)', () => {
  test('new types and changed statuses; removed ones are not reported', () => {
    const before = withMeta(pod('s'), {}, [
      ['a', 'True'],
      ['b', 'False'],
      ['gone', 'True'],
    ]);
    const after = withMeta(pod('s'), {}, [
      ['a', 'True'],
      ['b', 'True'],
      ['c', 'False'],
    ]);
    assert.deepEqual([...changedConditionTypes(before, after)].sort(), ['b', 'c']);
  });
});

describe('makePodProbeMarkerHandlers', () => {
  const setup = () => {
    const queued: string[] = [];
    const other = { ...ppm({ name: 'other' }), spec: { selector: { matchLabels: { app: 'b' } }, probes: [] } };
    const h = makePodProbeMarkerHandlers({
      queue: { add: (k) => void queued.push(k) },
      resourceVersions: new ResourceVersionExpectations(),
      listMarkers: () => [ppm(), other],
      getNode,
      serverless: true,
    });
    return { queued, h };
  };
  const labelled = (p: Pod, app: string): Pod => ({ ...p, metadata: { ...p.metadata, labels: { app } } });
  test('a pod becoming Initialized enqueues the markers selecting it', () => {
    const { queued, h } = setup();
    h.pod.onUpdate!(labelled(pod('a', { initialized: false }), 'a'), labelled(pod('a'), 'a'));
    assert.deepEqual(queued, ['ns/m']);
  });
  test('relabelled from one marker to another: both look again', () => {
    const { queued, h } = setup();
    h.pod.onUpdate!(labelled(pod('a'), 'a'), labelled(pod('a'), 'b'));
    assert.deepEqual(queued, ['ns/m', 'ns/other']);
  });
  test('an IP change counts; a status change that matters to no marker does not', () => {
    const { queued, h } = setup();
    h.pod.onUpdate!(labelled(pod('a'), 'a'), labelled(pod('a', { ip: '10.9.9.9' }), 'a'));
    h.pod.onUpdate!(labelled(pod('a'), 'a'), labelled(pod('a'), 'a'));
    h.pod.onUpdate!(labelled(pod('u', { node: '' }), 'a'), labelled(pod('u', { node: '' }), 'a'));
    assert.deepEqual(queued, ['ns/m']);
  });
  test('a pod finishing or deleted: its markers recount', () => {
    const { queued, h } = setup();
    h.pod.onUpdate!(labelled(pod('a'), 'a'), labelled(pod('a', { phase: 'Succeeded' }), 'a'));
    h.pod.onDelete!(labelled(pod('a'), 'a'));
    assert.deepEqual(queued, ['ns/m', 'ns/m']);
  });
  test('serverless: a condition a probe names changing on a virtual-kubelet node pod enqueues its marker', () => {
    const { queued, h } = setup();
    const s = labelled(pod('s', { node: 'vk' }), 'a');
    h.pod.onUpdate!(s, withMeta(s, {}, [['unrelated', 'True']]));
    assert.deepEqual(queued, []);
    h.pod.onUpdate!(s, withMeta(s, {}, [['game/ok', 'True']]));
    assert.deepEqual(queued, ['ns/m']);
  });
  test('serverless: the same condition change on an ordinary node enqueues nothing (kruise-daemon reports there)', () => {
    const { queued, h } = setup();
    const a = labelled(pod('a'), 'a');
    h.pod.onUpdate!(a, withMeta(a, {}, [['game/ok', 'True']]));
    assert.deepEqual(queued, []);
  });
  test('a NodePodProbe appearing (not at start-up) enqueues every marker', () => {
    const { queued, h } = setup();
    h.nodePodProbe.onAdd!(npp('n9'), true);
    assert.deepEqual(queued, []);
    h.nodePodProbe.onAdd!(npp('n9'), false);
    assert.deepEqual(queued, ['ns/m', 'ns/other']);
  });
});
