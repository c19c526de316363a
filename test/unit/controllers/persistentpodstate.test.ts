// PersistentPodState decisions, table-style (spec §14): recorded pod states, cleanup on scale-down
// and workload deletion, auto-generation from workload annotations, and the pod webhook's node
// selector / preferred affinity injection.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import { defaultFeatureGates } from '../../../src/apis/features.ts';
import {
  generateKey,
  parseGenerateName,
  planGeneratedState,
  planPodStates,
  type AnnotatedWorkload,
  type TargetWorkload,
} from '../../../src/controllers/persistentpodstate/plan.ts';
import { pino } from 'pino';
import {
  makePersistentPodStateHandlers,
  PersistentPodStateReconciler,
  type Workload,
} from '../../../src/controllers/persistentpodstate/controller.ts';
import { ResourceVersionExpectations } from '../../../src/runtime/expectations.ts';
import type { CustomWorkload } from '../../../src/util/custom-workloads.ts';
import { replicasRange } from '../../../src/util/ordinals.ts';
import { persistentNodeAffinity, type StoredPersistentPodState } from '../../../src/util/persistentpodstate.ts';
import { injectPersistentPodState } from '../../../src/webhooks/pod/persistentpodstate.ts';
import type { PodAdmission } from '../../../src/webhooks/pod/types.ts';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function pps(
  spec: Partial<NonNullable<StoredPersistentPodState['spec']>> = {},
  status?: StoredPersistentPodState['status'],
): StoredPersistentPodState {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'PersistentPodState',
    metadata: { name: 'web', namespace: 'ns', generation: 2, resourceVersion: '5' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web' },
      requiredPersistentTopology: { keys: [ZONE] },
      preferredPersistentTopology: [{ weight: 100, preference: { keys: [HOST] } }],
      persistentPodAnnotations: [{ key: 'ip' }],
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

const node = (name: string, zone: string): Node => ({ metadata: { name, labels: { [ZONE]: zone, [HOST]: name, other: 'x' } } });
const NODES: Record<string, Node> = { n1: node('n1', 'z1'), n2: node('n2', 'z2') };

function pod(name: string, nodeName: string | undefined, ready: boolean, annotations?: Record<string, string>): Pod {
  return {
    metadata: { name, namespace: 'ns', ...(annotations ? { annotations } : {}) },
    spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

const workload = (replicas: number, reserveOrdinals?: Array<number | string>): TargetWorkload => ({
  deleting: false,
  replicas: replicasRange({ spec: { replicas, ...(reserveOrdinals ? { reserveOrdinals } : {}) } }, { StatefulSetStartOrdinal: false }),
});

const plan = (p: StoredPersistentPodState, w: TargetWorkload | undefined, pods: Pod[]) =>
  planPodStates({ pps: p, workload: w, pods, node: (n) => NODES[n] });

describe('planPodStates', () => {
  test('records node, required + preferred topology labels and listed annotations of ready scheduled pods only', () => {
    const status = plan(pps(), workload(3), [
      pod('web-0', 'n1', true, { ip: '10.0.0.1', other: 'no' }),
      pod('web-1', 'n2', false),
      pod('web-2', undefined, true),
    ]);
    assert.deepEqual(status, {
      observedGeneration: 2,
      podStates: { 'web-0': { nodeName: 'n1', nodeTopologyLabels: { [ZONE]: 'z1', [HOST]: 'n1' }, annotations: { ip: '10.0.0.1' } } },
    });
  });

  test('unchanged states are not rewritten; a state is kept while its pod is recreated', () => {
    const recorded = { 'web-0': { nodeName: 'n1', nodeTopologyLabels: { [ZONE]: 'z1', [HOST]: 'n1' } } };
    const stored = pps({ persistentPodAnnotations: [] }, { observedGeneration: 2, podStates: recorded });
    assert.equal(plan(stored, workload(1), [pod('web-0', 'n1', true)]), undefined);
    assert.equal(plan(stored, workload(1), [pod('web-0', undefined, false)]), undefined);
    assert.equal(plan(stored, workload(1), []), undefined);
  });

  test('a pod that moved is re-recorded', () => {
    const stored = pps(
      { persistentPodAnnotations: [] },
      { observedGeneration: 2, podStates: { 'web-0': { nodeName: 'n1', nodeTopologyLabels: { [ZONE]: 'z1', [HOST]: 'n1' } } } },
    );
    assert.deepEqual(plan(stored, workload(1), [pod('web-0', 'n2', true)])?.podStates, {
      'web-0': { nodeName: 'n2', nodeTopologyLabels: { [ZONE]: 'z2', [HOST]: 'n2' } },
    });
  });

  const three = {
    'web-0': { nodeName: 'n1' },
    'web-1': { nodeName: 'n1' },
    'web-2': { nodeName: 'n2' },
  };
  // The recorded pod names afterwards ('unchanged': no status write).
  const cases: Array<
    [string, Partial<NonNullable<StoredPersistentPodState['spec']>>, TargetWorkload | undefined, Pod[], string[] | 'unchanged']
  > = [
    ['WhenScaled: states of pods scaled away and gone are dropped', {}, workload(1), [], ['web-0']],
    [
      'WhenScaled: a pod scaled away but still there keeps its state',
      {},
      workload(1),
      [pod('web-2', undefined, false)],
      ['web-0', 'web-2'],
    ],
    ['WhenScaled respects reserveOrdinals', {}, workload(2, [1]), [], ['web-0', 'web-2']],
    ['WhenDeleted keeps states of pods scaled away', { persistentPodStateRetentionPolicy: 'WhenDeleted' }, workload(1), [], 'unchanged'],
    ['workload gone: no states', {}, undefined, [], []],
    ['workload being deleted: no states', {}, { ...workload(3), deleting: true }, [], []],
  ];
  for (const [name, spec, w, pods, want] of cases) {
    test(name, () => {
      const status = plan(pps({ persistentPodAnnotations: [], ...spec }, { observedGeneration: 2, podStates: three }), w, pods);
      assert.deepEqual(status === undefined ? 'unchanged' : Object.keys(status.podStates ?? {}).sort(), want);
    });
  }

  test('observedGeneration follows the spec', () => {
    const stored = pps({}, { observedGeneration: 1 });
    assert.deepEqual(plan(stored, workload(1), []), { observedGeneration: 2 });
  });
});

describe('planGeneratedState', () => {
  const sts = (annotations: Record<string, string>): AnnotatedWorkload => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'ns', uid: 'sts-uid', annotations },
  });
  const auto = {
    'kruise.io/auto-generate-persistent-pod-state': 'true',
    'kruise.io/required-persistent-topology': `${ZONE}`,
    'kruise.io/preferred-persistent-topology': `${HOST},rack`,
    'kruise.io/persistent-pod-annotations': 'ip,mac',
  };

  test('creates a PersistentPodState of the same name, controlled by the workload', () => {
    const { create } = planGeneratedState(sts(auto), undefined);
    assert.deepEqual(create, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'PersistentPodState',
      metadata: {
        name: 'db',
        namespace: 'ns',
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'db', uid: 'sts-uid', controller: true }],
      },
      spec: {
        targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'db' },
        requiredPersistentTopology: { keys: [ZONE] },
        persistentPodAnnotations: [{ key: 'ip' }, { key: 'mac' }],
        preferredPersistentTopology: [{ weight: 100, preference: { keys: [HOST, 'rack'] } }],
      },
    });
  });

  test('updates when the annotations change; nothing when equal', () => {
    const existing = planGeneratedState(sts(auto), undefined).create!;
    assert.deepEqual(planGeneratedState(sts(auto), existing), {});
    const { update } = planGeneratedState(sts({ ...auto, 'kruise.io/required-persistent-topology': 'rack' }), existing);
    assert.deepEqual(update?.spec?.requiredPersistentTopology, { keys: ['rack'] });
  });

  test('deletes the generated one when the annotation goes; leaves a hand-made one', () => {
    const generated = planGeneratedState(sts(auto), undefined).create!;
    assert.equal(planGeneratedState(sts({}), generated).delete, generated);
    const handMade = { ...generated, metadata: { ...generated.metadata, ownerReferences: [] } };
    assert.deepEqual(planGeneratedState(sts({}), handMade), {});
  });

  test('incomplete annotations (no topology) change nothing', () => {
    assert.deepEqual(planGeneratedState(sts({ 'kruise.io/auto-generate-persistent-pod-state': 'true' }), undefined), {});
  });

  test('generate keys round-trip', () => {
    const key = generateKey({ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'ns', name: 'db' });
    assert.equal(key, 'ns/generate#apps/v1#StatefulSet#db');
    assert.deepEqual(parseGenerateName(key.slice(3)), { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' });
  });
});

describe('pod webhook: PersistentPodState injection', () => {
  const recorded = pps(
    {},
    { observedGeneration: 2, podStates: { 'web-0': { nodeName: 'n1', nodeTopologyLabels: { [ZONE]: 'z1', [HOST]: 'n1' } } } },
  );
  const admission = (states: StoredPersistentPodState[]): PodAdmission => ({
    features: defaultFeatureGates({}),
    now: new Date(0),
    random: () => 0,
    cache: {
      list: async <T>(_v: string, kind: string, opts?: { namespace?: string }) =>
        (kind === 'PersistentPodState' ? states.filter((s) => s.metadata.namespace === opts?.namespace) : []) as T[],
      get: async () => undefined,
    },
  });
  const owned = (name: string, ownerApiVersion = 'apps.kruise.io/v1beta1', kind = 'StatefulSet'): Pod => ({
    metadata: { name, namespace: 'ns', ownerReferences: [{ apiVersion: ownerApiVersion, kind, name: 'web', uid: 'u', controller: true }] },
    spec: { containers: [{ name: 'c' }], nodeSelector: { existing: 'yes' } },
  });

  test('required keys become nodeSelector entries, preferred terms weighted In preferences, plus the annotation', async () => {
    const p = owned('web-0');
    assert.equal(await injectPersistentPodState(p, admission([recorded])), true);
    assert.deepEqual(p.spec?.nodeSelector, { existing: 'yes', [ZONE]: 'z1' });
    assert.deepEqual(p.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution, [
      { weight: 100, preference: { matchExpressions: [{ key: HOST, operator: 'In', values: ['n1'] }] } },
    ]);
    assert.equal(p.metadata.annotations?.['kruise.io/injected-persistent-pod-state'], 'web');
  });

  const untouched: Array<[string, Pod, StoredPersistentPodState[]]> = [
    ['a pod with no recorded state (first creation)', owned('web-1'), [recorded]],
    ['no PersistentPodState for the workload', owned('web-0'), []],
    ['another workload kind', owned('web-0', 'apps/v1', 'ReplicaSet'), [recorded]],
    ['no controller', { metadata: { name: 'web-0', namespace: 'ns' }, spec: { containers: [] } }, [recorded]],
  ];
  for (const [name, p, states] of untouched) {
    test(`untouched: ${name}`, async () => {
      const before = structuredClone(p);
      assert.equal(await injectPersistentPodState(p, admission(states)), false);
      assert.deepEqual(p, before);
    });
  }

  test('the target matches by group, kind and name whatever the version (v1alpha1 owner ref)', async () => {
    const p = owned('web-0', 'apps.kruise.io/v1alpha1');
    assert.equal(await injectPersistentPodState(p, admission([recorded])), true);
  });

  test('persistentNodeAffinity leaves out keys the state did not record', () => {
    const { nodeSelector, preferred } = persistentNodeAffinity(
      {
        targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x' },
        requiredPersistentTopology: { keys: [ZONE, 'rack'] },
        preferredPersistentTopology: [{ weight: 10, preference: { keys: ['rack'] } }],
      },
      { nodeTopologyLabels: { [ZONE]: 'z1' } },
    );
    assert.deepEqual(nodeSelector, { [ZONE]: 'z1' });
    assert.deepEqual(preferred, [{ weight: 10, preference: {} }]);
  });
});

describe('PersistentPodState event handlers', () => {
  test('a status write seen in the cache re-runs the PersistentPodState (a round gated on it must not wait for the expectation timeout)', () => {
    const queued: string[] = [];
    const resourceVersions = new ResourceVersionExpectations();
    const handlers = makePersistentPodStateHandlers({
      queue: { add: (k) => queued.push(k) },
      cache: { listStates: () => [], whitelist: () => [] },
      resourceVersions,
    });
    const before = pps();
    before.metadata.uid = 'pps-uid';
    resourceVersions.expect({ metadata: { uid: 'pps-uid', resourceVersion: '6' } });
    const written = { ...before, metadata: { ...before.metadata, resourceVersion: '6' } };
    handlers.state.onUpdate!(before, written);
    assert.deepEqual(queued, ['ns/web']);
    assert.equal(resourceVersions.isSatisfied(written).satisfied, true);
  });

  test('pods: becoming ready or deleted re-runs the PersistentPodState of their StatefulSet', () => {
    const queued: string[] = [];
    const states = [pps()];
    const handlers = makePersistentPodStateHandlers({
      queue: { add: (k) => queued.push(k) },
      cache: { listStates: () => states, whitelist: () => [] },
      resourceVersions: new ResourceVersionExpectations(),
    });
    const owned = (ready: boolean, rv: string): Pod => ({
      ...pod('web-0', 'n1', ready),
      metadata: {
        name: 'web-0',
        namespace: 'ns',
        resourceVersion: rv,
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web', uid: 'u', controller: true }],
      },
    });
    handlers.pod.onUpdate!(owned(false, '1'), owned(false, '2'));
    assert.deepEqual(queued, []);
    handlers.pod.onUpdate!(owned(false, '2'), owned(true, '3'));
    handlers.pod.onDelete!(owned(true, '3'));
    assert.deepEqual(queued, ['ns/web', 'ns/web']);
  });
});

describe('PersistentPodStateReconciler', () => {
  const GAME_SERVERS = [{ group: 'example.io', version: 'v1', kind: 'GameServerSet', subResources: [] }];
  function setup(
    state: StoredPersistentPodState,
    workloads: Record<string, Workload> = {},
    pods: Pod[] = [],
    opts: { whitelist?: CustomWorkload[]; custom?: Record<string, Workload> } = {},
  ) {
    const statuses: unknown[] = [];
    const events: string[] = [];
    const created: unknown[] = [];
    const r = new PersistentPodStateReconciler({
      cache: {
        getState: (_ns, name) => (name === state.metadata.name ? state : undefined),
        listStates: () => [state],
        getWorkload: (group, _ns, name) => workloads[`${group}/${name}`],
        podsOf: () => pods,
        getNode: (n) => NODES[n],
        whitelist: () => opts.whitelist ?? [],
        customWorkload: async (apiVersion, kind, _ns, name) => opts.custom?.[`${apiVersion}/${kind}/${name}`],
      },
      client: {
        updateStatus: async (_t: unknown, o: StoredPersistentPodState) => {
          statuses.push(o.status);
          return o;
        },
        create: async (_t: unknown, o: unknown) => {
          created.push(o);
          return o;
        },
      } as never,
      recorder: { event: (_o: unknown, _t: string, reason: string) => events.push(reason) },
      log: pino({ level: 'silent' }),
      resourceVersions: new ResourceVersionExpectations(),
      startOrdinal: false,
    });
    return { r, statuses, events, created };
  }
  const sts: Workload = { metadata: { name: 'web', namespace: 'ns', uid: 'sts' }, spec: { replicas: 2 } };

  test('an Advanced StatefulSet target: ready pods recorded', async () => {
    const { r, statuses } = setup(pps(), { 'apps.kruise.io/web': sts }, [pod('web-0', 'n1', true)]);
    assert.deepEqual(await r.reconcile('ns/web'), {});
    assert.deepEqual(Object.keys((statuses[0] as { podStates: object }).podStates), ['web-0']);
  });

  test('an apps/v1 target is looked up in the apps group', async () => {
    const native = pps({ targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' } });
    const { r, statuses } = setup(native, { 'apps/web': sts }, [pod('web-0', 'n1', true)]);
    await r.reconcile('ns/web');
    assert.equal(statuses.length, 1);
  });

  test('a custom workload the whitelist does not list is not followed: Event, no status write', async () => {
    const custom = pps({ targetRef: { apiVersion: 'example.io/v1', kind: 'GameServerSet', name: 'web' } });
    const { r, statuses, events } = setup(custom);
    assert.deepEqual(await r.reconcile('ns/web'), {});
    assert.deepEqual([statuses, events], [[], ['UnsupportedWorkload']]);
  });

  test('a whitelisted custom workload: ready pods within spec.replicas recorded, those scaled away forgotten', async () => {
    const custom = pps(
      { targetRef: { apiVersion: 'example.io/v1', kind: 'GameServerSet', name: 'web' } },
      { observedGeneration: 2, podStates: { 'web-0': { nodeName: 'n9' }, 'web-5': { nodeName: 'n9' } } },
    );
    const gss: Workload = { metadata: { name: 'web', namespace: 'ns', uid: 'gss' }, spec: { replicas: 2 } };
    const { r, statuses, events } = setup(custom, {}, [pod('web-0', 'n1', true), pod('web-1', 'n1', false)], {
      whitelist: GAME_SERVERS,
      custom: { 'example.io/v1/GameServerSet/web': gss },
    });
    assert.deepEqual(await r.reconcile('ns/web'), {});
    assert.deepEqual(events, []);
    const states = (statuses[0] as { podStates: Record<string, { nodeName: string }> }).podStates;
    assert.deepEqual(Object.keys(states), ['web-0']);
    assert.equal(states['web-0']!.nodeName, 'n1');
  });

  test('a whitelisted custom workload that is gone clears the states', async () => {
    const custom = pps(
      { targetRef: { apiVersion: 'example.io/v1', kind: 'GameServerSet', name: 'web' } },
      { observedGeneration: 2, podStates: { 'web-0': { nodeName: 'n1' } } },
    );
    const { r, statuses } = setup(custom, {}, [], { whitelist: GAME_SERVERS });
    await r.reconcile('ns/web');
    assert.deepEqual((statuses[0] as { podStates?: object }).podStates ?? {}, {});
  });

  test('auto-generation for a whitelisted custom workload', async () => {
    const gss: Workload = {
      metadata: {
        name: 'game',
        namespace: 'ns',
        uid: 'gss',
        annotations: {
          'kruise.io/auto-generate-persistent-pod-state': 'true',
          'kruise.io/preferred-persistent-topology': 'kubernetes.io/hostname',
        },
      },
      spec: { replicas: 2 },
    };
    const { r, created } = setup(pps(), {}, [], { whitelist: GAME_SERVERS, custom: { 'example.io/v1/GameServerSet/game': gss } });
    await r.reconcile('ns/generate#example.io/v1#GameServerSet#game');
    assert.equal(created.length, 1);
    const made = created[0] as StoredPersistentPodState;
    assert.deepEqual(made.spec?.targetRef, { apiVersion: 'example.io/v1', kind: 'GameServerSet', name: 'game' });
    assert.equal(made.metadata.ownerReferences?.[0]?.uid, 'gss');
  });
});
