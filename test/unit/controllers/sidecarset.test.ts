// SidecarSet controller decisions (spec §6.3): managed pods, revisions and history, status,
// calculateUpgradeCount term for term, partition / maxUnavailable / selector / paused / NotUpdate,
// the upgraded pod and the SidecarSetUpgradable condition.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ControllerRevision, Pod } from '../../../src/apis/core-objects.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { injectSidecarSets } from '../../../src/webhooks/pod/index.ts';
import { mutateSidecarSet } from '../../../src/webhooks/sidecarset/index.ts';
import { hotUpgradeContainerToUpgrade } from '../../../src/controllers/sidecarset/hotupgrade.ts';
import { planSidecarSet, type SidecarSetObserved } from '../../../src/controllers/sidecarset/plan.ts';
import { planRevisions } from '../../../src/controllers/sidecarset/revisions.ts';
import { upgradableCondition } from '../../../src/controllers/sidecarset/strategy.ts';
import {
  COUNTING_ROUND_DELAY_MS,
  podUpdateRoundDelay,
  sidecarSetSpecChanged,
  UPGRADE_FINISHED_ROUND_DELAY_MS,
} from '../../../src/controllers/sidecarset/controller.ts';
import { podSidecarSetHash, sidecarSetRevisionData, type StoredSidecarSet } from '../../../src/util/sidecarset.ts';
import { controllerRevisionName, hashControllerRevision, marshalGoJSON } from '../../../src/util/revision.ts';

const NOW = new Date('2026-11-23T12:00:00Z');

function sidecarSet(image: string, strategy: Record<string, any> = {}, extra: Record<string, any> = {}): StoredSidecarSet {
  const s: any = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name: 'log', uid: 'ss-uid', generation: 2, resourceVersion: '10' },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'agent', image }], updateStrategy: strategy, ...extra },
  };
  mutateSidecarSet(s, {
    operation: 'UPDATE',
    apiVersion: 'apps.kruise.io/v1beta1',
    userInfo: {},
    dryRun: false,
    features: FEATURE_GATE_DEFAULTS,
  });
  return s;
}

/** A running pod injected with `injectedFrom`, its status reflecting its spec (the simulated kubelet). */
function pod(i: number, injectedFrom: StoredSidecarSet, o: { ready?: boolean; labels?: Record<string, string> } = {}): Pod {
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${i}`,
      namespace: 'default',
      uid: `uid-${i}`,
      resourceVersion: String(100 + i),
      creationTimestamp: `2026-11-23T11:00:${String(i).padStart(2, '0')}Z`,
      labels: { app: 'web', ...o.labels },
    },
    spec: { containers: [{ name: 'main', image: 'nginx:1' }] },
  } as Pod;
  injectSidecarSets(p, [injectedFrom], { now: NOW, sortByName: false });
  running(p, o.ready ?? true);
  return p;
}

function running(p: Pod, ready: boolean): void {
  p.spec!.nodeName = 'node-1';
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: p.spec!.containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `docker.io/${c.image}@sha256:${c.image}`,
      ready,
      restartCount: 0,
      started: true,
      state: { running: { startedAt: '2026-11-23T11:00:00Z' } },
    })),
  } as Pod['status'];
}

function observed(s: StoredSidecarSet, pods: Pod[], revisions: ControllerRevision[] = []): SidecarSetObserved {
  return { sidecarSet: s, pods, namespaces: new Map(), revisions, revisionNamespace: 'kruise-system', now: NOW };
}

const agentImage = (p: Pod) => p.spec!.containers.find((c) => c.name === 'agent')!.image;

describe('SidecarSet controller plan', () => {
  const v1 = sidecarSet('agent:1');
  const tenPods = () => Array.from({ length: 10 }, (_, i) => pod(i, v1));

  test('status of an unchanged SidecarSet: all matched pods updated and ready; the first revision is created', () => {
    const plan = planSidecarSet(observed(v1, tenPods()));
    assert.equal(plan.revision.create?.metadata.name, plan.revision.latestName);
    assert.equal(plan.revision.create?.metadata.namespace, 'kruise-system');
    assert.equal(plan.revision.create?.metadata.labels?.['kruise.io/sidecarset-name'], 'log');
    assert.equal(plan.revision.create?.revision, 1);
    assert.deepEqual(plan.status, {
      observedGeneration: 2,
      matchedPods: 10,
      updatedPods: 10,
      readyPods: 10,
      updatedReadyPods: 10,
      latestRevision: plan.revision.latestName,
      collisionCount: 0,
    });
    assert.equal(plan.upgrades.length, 0);
  });

  test('pods not injected by the SidecarSet, or terminating, are not managed', () => {
    const foreign = pod(1, sidecarSet('agent:1'));
    foreign.metadata.annotations!['kruise.io/sidecarset-injected-list'] = 'other';
    const gone = pod(2, v1);
    gone.metadata.deletionTimestamp = '2026-11-23T11:59:00Z';
    const plan = planSidecarSet(observed(v1, [foreign, gone, pod(3, v1)]));
    assert.equal(plan.status?.matchedPods, 1);
  });

  test('an image change upgrades at most maxUnavailable pods per round, in place, keeping everything else', () => {
    const v2 = sidecarSet('agent:2', { maxUnavailable: 2 });
    const pods = tenPods();
    const plan = planSidecarSet(observed(v2, pods));
    assert.equal(plan.status?.updatedPods, 0);
    assert.equal(plan.upgrades.length, 2);
    const { pod: before, updated } = plan.upgrades[0]!;
    assert.equal(agentImage(updated), 'agent:2');
    assert.equal(updated.metadata.uid, before.metadata.uid);
    assert.deepEqual(
      updated.spec!.containers.find((c) => c.name === 'main'),
      before.spec!.containers.find((c) => c.name === 'main'),
    );
    const hash = JSON.parse(updated.metadata.annotations!['kruise.io/sidecarset-hash']!);
    assert.equal(hash.log.hash, v2.metadata.annotations!['kruise.io/sidecarset-hash']);
    assert.equal(hash.log.controllerRevision, plan.revision.latestName);
    assert.equal(
      updated.metadata.annotations!['kruise.io/sidecarset-inplace-update-state'],
      `{"log":{"revision":"${v2.metadata.annotations!['kruise.io/sidecarset-hash']}","updateTimestamp":"2026-11-23T12:00:00Z","lastContainerStatuses":{"agent":{"imageID":"docker.io/agent:1@sha256:agent:1"}}}}`,
    );
    assert.deepEqual(
      plan.conditions.map((c) => c.conditions.at(-1)),
      plan.upgrades.map(() => ({
        type: 'SidecarSetUpgradable',
        status: 'True',
        reason: 'AllSidecarsetUpgradable',
        message: '{"log":true}',
        lastProbeTime: null,
        lastTransitionTime: '2026-11-23T12:00:00Z',
      })),
    );
  });

  test('upgraded pods not yet running the new image count against maxUnavailable; not-ready pods are upgraded for free', () => {
    const v2 = sidecarSet('agent:2', { maxUnavailable: 2 });
    const pods = tenPods();
    // Two pods already got the new image in spec; their containers still run the old one.
    const first = planSidecarSet(observed(v2, pods)).upgrades;
    for (const { updated } of first) {
      const i = pods.findIndex((p) => p.metadata.uid === updated.metadata.uid);
      pods[i] = { ...updated, status: pods[i]!.status };
    }
    const old = pods.find((p) => !first.some((u) => u.pod.metadata.uid === p.metadata.uid))!;
    let plan = planSidecarSet(observed(v2, pods));
    assert.equal(plan.status?.updatedPods, 2);
    assert.equal(plan.status?.updatedReadyPods, 0);
    assert.equal(plan.upgrades.length, 0);
    // One old pod goes not-ready: it is upgraded although the budget is spent.
    running(old, false);
    plan = planSidecarSet(observed(v2, pods));
    assert.deepEqual(
      plan.upgrades.map((u) => u.pod.metadata.name),
      [old.metadata.name],
    );
  });

  test('an upgrade patches the pod metadata as injection does (v1.8.2 e2e "sidecarSet patch pod metadata")', () => {
    const patched = (image: string, patchPolicy: string, key: string) =>
      sidecarSet(image, { maxUnavailable: 10 }, { patchPodMetadata: [{ patchPolicy, annotations: { key } }] });
    const rows: Array<[string, string, string, string, string]> = [
      // policy, at injection, at the upgrade, the pod's annotation after the upgrade
      ['MergePatchJson', '{"nginx-sidecar":1}', '{"nginx-sidecar":2}', '{"nginx-sidecar":2}', 'merged: the new value'],
      ['MergePatchJson', '{"b":1,"a":1}', '{"c":2,"a":null}', '{"b":1,"c":2}', 'merged: keys added and removed, sorted'],
      ['Overwrite', 'one', 'two', 'two', 'overwritten'],
      ['Retain', 'one', 'two', 'one', 'kept'],
    ];
    for (const [policy, injected, upgraded, after, what] of rows) {
      const pods = [pod(0, patched('agent:1', policy, injected))];
      assert.equal(pods[0]!.metadata.annotations!.key, injected, what);
      const plan = planSidecarSet(observed(patched('agent:2', policy, upgraded), pods));
      assert.equal(plan.upgrades[0]?.updated.metadata.annotations!.key, after, what);
    }
  });

  test('partition 4 leaves 4 pods on the old sidecar', () => {
    const v2 = sidecarSet('agent:2', { maxUnavailable: 10, partition: 4 });
    const plan = planSidecarSet(observed(v2, tenPods()));
    assert.equal(plan.upgrades.length, 6);
    const half = sidecarSet('agent:2', { maxUnavailable: '100%', partition: '50%' });
    assert.equal(planSidecarSet(observed(half, tenPods())).upgrades.length, 5);
  });

  test('updateStrategy.selector picks the pods; paused and NotUpdate upgrade none', () => {
    const pods = tenPods();
    pods[3]!.metadata.labels!.canary = 'true';
    const selected = sidecarSet('agent:2', { maxUnavailable: 10, selector: { matchLabels: { canary: 'true' } } });
    assert.deepEqual(
      planSidecarSet(observed(selected, pods)).upgrades.map((u) => u.pod.metadata.name),
      ['web-3'],
    );
    assert.equal(planSidecarSet(observed(sidecarSet('agent:2', { paused: true }), tenPods())).upgrades.length, 0);
    assert.equal(planSidecarSet(observed(sidecarSet('agent:2', { type: 'NotUpdate' }), tenPods())).upgrades.length, 0);
  });

  test('priority: higher weight first', () => {
    const pods = tenPods();
    pods[7]!.metadata.labels!.tier = 'first';
    const s = sidecarSet('agent:2', {
      priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'first' } } }] },
    });
    assert.deepEqual(
      planSidecarSet(observed(s, pods)).upgrades.map((u) => u.pod.metadata.name),
      ['web-7'],
    );
  });

  test('a change of more than images is not upgradable: SidecarSetUpgradable=False, an event count', () => {
    const changed = sidecarSet('agent:1', {}, { containers: [{ name: 'agent', image: 'agent:1', args: ['--new'] }] });
    const plan = planSidecarSet(observed(changed, tenPods()));
    assert.equal(plan.upgrades.length, 0);
    assert.equal(plan.notUpgradable, 10);
    assert.deepEqual(plan.conditions[0]!.conditions.at(-1), {
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"log":false}',
      lastProbeTime: null,
      lastTransitionTime: '2026-11-23T12:00:00Z',
    });
  });

  test('the upgradable condition keeps other SidecarSets’ entries and changes nothing when already right', () => {
    const p = pod(1, v1);
    p.status!.conditions!.push({
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"other":false}',
    } as any);
    const c = upgradableCondition(p, 'log', true, NOW)!.at(-1)!;
    assert.equal(c.status, 'False');
    assert.equal(c.message, '{"log":true,"other":false}');
    p.status!.conditions = [c];
    assert.equal(upgradableCondition(p, 'log', true, NOW), undefined);
  });
});

describe('SidecarSet hot upgrade (spec §6.3 step 5)', () => {
  const hot = (image: string, strategy: Record<string, any> = {}, resourceVersion = '10') => {
    const s = sidecarSet(image, strategy, {
      containers: [{ name: 'mesh', image, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'mesh:empty' } }],
    });
    s.metadata.resourceVersion = resourceVersion;
    return s;
  };
  const images = (p: Pod) => Object.fromEntries(p.spec!.containers.map((c) => [c.name, c.image]));
  const versions = (p: Pod) =>
    Object.fromEntries(
      Object.entries(p.metadata.annotations!).filter(
        ([k]) => k.startsWith('version') || k === 'kruise.io/sidecarset-working-hotupgrade-container',
      ),
    );
  /** What the kubelet shows once it restarted the changed containers with their spec images. */
  const restarted = (updated: Pod, ready = true): Pod => {
    const p = structuredClone(updated);
    running(p, ready);
    return p;
  };

  test('injection: <name>-1 works on the image, <name>-2 idles on the empty image', () => {
    const p = pod(0, hot('mesh:1'));
    assert.deepEqual(images(p), { 'mesh-1': 'mesh:1', 'mesh-2': 'mesh:empty', main: 'nginx:1' });
    assert.deepEqual(versions(p), {
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-1"}',
      'version.sidecarset.kruise.io/mesh-1': '1',
      'versionalt.sidecarset.kruise.io/mesh-1': '0',
      'version.sidecarset.kruise.io/mesh-2': '0',
      'versionalt.sidecarset.kruise.io/mesh-2': '1',
    });
  });

  test('an image change goes to the idle container; only once it is ready does it become the working one, and the old one resets', () => {
    const v1 = hot('mesh:1');
    const v2 = hot('mesh:2', {}, '27');
    const before = pod(0, v1);

    // 1. The idle mesh-2 gets the new image; versions record the SidecarSet resourceVersion.
    let plan = planSidecarSet(observed(v2, [before]));
    assert.equal(plan.resets.length, 0);
    assert.equal(plan.upgrades.length, 1);
    const upgraded = plan.upgrades[0]!.updated;
    assert.deepEqual(images(upgraded), { 'mesh-1': 'mesh:1', 'mesh-2': 'mesh:2', main: 'nginx:1' });
    // mesh-1 keeps working until mesh-2 is ready (spec §6.3 step 5; v1.8.2 switches here).
    assert.deepEqual(versions(upgraded), {
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-1"}',
      'version.sidecarset.kruise.io/mesh-1': '1',
      'versionalt.sidecarset.kruise.io/mesh-1': '27',
      'version.sidecarset.kruise.io/mesh-2': '27',
      'versionalt.sidecarset.kruise.io/mesh-2': '1',
    });
    assert.equal(
      JSON.parse(upgraded.metadata.annotations!['kruise.io/sidecarset-hash']!).log.hash,
      v2.metadata.annotations!['kruise.io/sidecarset-hash'],
    );
    assert.deepEqual(JSON.parse(upgraded.metadata.annotations!['kruise.io/sidecarset-inplace-update-state']!).log.lastContainerStatuses, {
      'mesh-2': { imageID: 'docker.io/mesh:empty@sha256:mesh:empty' },
    });

    // 2. The kubelet has not restarted mesh-2 yet: nothing to reset, the pod is not counted ready.
    const pending = { ...upgraded, status: before.status };
    plan = planSidecarSet(observed(v2, [pending]));
    assert.equal(plan.resets.length, 0);
    assert.equal(plan.upgrades.length, 0);
    assert.equal(plan.status?.updatedPods, 1);
    assert.equal(plan.status?.readyPods, 0);

    // 3. mesh-2 restarted but not ready yet (and the pod not ready with it): still nothing.
    const notReady = restarted(upgraded, false);
    assert.equal(planSidecarSet(observed(v2, [notReady])).resets.length, 0);

    // 4. mesh-2 ready: it becomes the working one and mesh-1 goes back to the empty image, in one
    //    write; versions of the pair say so; the hash record stays.
    const ready = restarted(upgraded);
    plan = planSidecarSet(observed(v2, [ready]));
    assert.equal(plan.upgrades.length, 0);
    assert.equal(plan.resets.length, 1);
    const reset = plan.resets[0]!.updated;
    assert.deepEqual(images(reset), { 'mesh-1': 'mesh:empty', 'mesh-2': 'mesh:2', main: 'nginx:1' });
    assert.deepEqual(versions(reset), {
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-2"}',
      'version.sidecarset.kruise.io/mesh-1': '0',
      'versionalt.sidecarset.kruise.io/mesh-1': '27',
      'version.sidecarset.kruise.io/mesh-2': '27',
      'versionalt.sidecarset.kruise.io/mesh-2': '0',
    });
    assert.equal(reset.metadata.annotations!['kruise.io/sidecarset-hash'], upgraded.metadata.annotations!['kruise.io/sidecarset-hash']);
    assert.deepEqual(JSON.parse(reset.metadata.annotations!['kruise.io/sidecarset-inplace-update-state']!).log.lastContainerStatuses, {
      'mesh-1': { imageID: 'docker.io/mesh:1@sha256:mesh:1' },
      'mesh-2': { imageID: 'docker.io/mesh:empty@sha256:mesh:empty' },
    });
    // Not ready either until the reset is done (commonControl.IsPodReady).
    assert.equal(plan.status?.updatedReadyPods, 0);

    // 5. Done: nothing moves, the pod counts as updated and ready.
    plan = planSidecarSet(observed(v2, [restarted(reset)]));
    assert.equal(plan.resets.length + plan.upgrades.length, 0);
    assert.equal(plan.status?.updatedReadyPods, 1);

    // 6. The next image goes to mesh-1 (now on the empty image); mesh-2 works until mesh-1 is ready.
    const v3 = hot('mesh:3', {}, '40');
    const third = planSidecarSet(observed(v3, [restarted(reset)])).upgrades[0]!.updated;
    assert.deepEqual(images(third), { 'mesh-1': 'mesh:3', 'mesh-2': 'mesh:2', main: 'nginx:1' });
    assert.deepEqual(versions(third), {
      'kruise.io/sidecarset-working-hotupgrade-container': '{"mesh":"mesh-2"}',
      'version.sidecarset.kruise.io/mesh-1': '40',
      'versionalt.sidecarset.kruise.io/mesh-1': '27',
      'version.sidecarset.kruise.io/mesh-2': '27',
      'versionalt.sidecarset.kruise.io/mesh-2': '40',
    });
    const switched = planSidecarSet(observed(v3, [restarted(third)])).resets[0]!.updated;
    assert.equal(switched.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container'], '{"mesh":"mesh-1"}');
    assert.deepEqual(images(switched), { 'mesh-1': 'mesh:3', 'mesh-2': 'mesh:empty', main: 'nginx:1' });
  });

  test('a pod OpenKruise upgraded before a takeover (annotation already on the new container) finishes forward, never back', () => {
    const v2 = hot('mesh:2', {}, '27');
    const upgraded = planSidecarSet(observed(v2, [pod(0, hot('mesh:1'))])).upgrades[0]!.updated;
    upgraded.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container'] = '{"mesh":"mesh-2"}';
    const reset = planSidecarSet(observed(v2, [restarted(upgraded)])).resets[0]!.updated;
    assert.deepEqual(images(reset), { 'mesh-1': 'mesh:empty', 'mesh-2': 'mesh:2', main: 'nginx:1' });
    assert.equal(reset.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container'], '{"mesh":"mesh-2"}');
    assert.equal(reset.metadata.annotations!['version.sidecarset.kruise.io/mesh-1'], '0');
    assert.equal(reset.metadata.annotations!['versionalt.sidecarset.kruise.io/mesh-2'], '0');
  });

  test('a finished hot upgrade is reset even when the SidecarSet is paused or NotUpdate', () => {
    const upgraded = planSidecarSet(observed(hot('mesh:2'), [pod(0, hot('mesh:1'))])).upgrades[0]!.updated;
    const ready = structuredClone(upgraded);
    running(ready, true);
    for (const strategy of [{ paused: true }, { type: 'NotUpdate' }]) {
      const plan = planSidecarSet(observed(hot('mesh:2', strategy), [ready]));
      assert.equal(plan.resets.length, 1, JSON.stringify(strategy));
      assert.equal(images(plan.resets[0]!.updated)['mesh-1'], 'mesh:empty');
    }
  });

  test('with neither container empty, the one not ready gets the image; with both ready, the one not working', () => {
    const v1 = hot('mesh:1');
    const p = pod(0, v1);
    p.spec!.containers.find((c) => c.name === 'mesh-2')!.image = 'mesh:0';
    running(p, true);
    p.status!.containerStatuses!.find((c) => c.name === 'mesh-1')!.ready = false;
    assert.equal(hotUpgradeContainerToUpgrade(v1.spec!.containers![0]!, p, v1).upgrade, 'mesh-1');
    p.status!.containerStatuses!.find((c) => c.name === 'mesh-1')!.ready = true;
    assert.equal(hotUpgradeContainerToUpgrade(v1.spec!.containers![0]!, p, v1).upgrade, 'mesh-2');
  });
});

describe('SidecarSet revisions', () => {
  const rev = (s: StoredSidecarSet, n: number, name = `log-${n}`): ControllerRevision =>
    ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace: 'kruise-system', labels: {} },
      data: sidecarSetRevisionData(s),
      revision: n,
    }) as ControllerRevision;

  test('the latest equal revision is reused; an older equal one is renumbered', () => {
    const a = sidecarSet('agent:1');
    const b = sidecarSet('agent:2');
    assert.deepEqual(planRevisions(observed(a, [], [rev(b, 1), rev(a, 2)]), []), { latestName: 'log-2', delete: [] });
    assert.deepEqual(planRevisions(observed(a, [], [rev(a, 1), rev(b, 2)]), []), {
      latestName: 'log-1',
      renumber: { name: 'log-1', revision: 3 },
      delete: [],
    });
  });

  test('a new revision as OpenKruise writes it: named with collision count 0 when status has none, its hash label, data in Go key order', () => {
    const s = sidecarSet('agent:1', {}, { volumes: [{ name: 'logs', emptyDir: {} }] });
    delete s.status;
    const create = planRevisions(observed(s, []), []).create!;
    const data = marshalGoJSON(sidecarSetRevisionData(s));
    assert.equal(create.metadata.name, controllerRevisionName('log', data, 0));
    assert.notEqual(create.metadata.name, controllerRevisionName('log', data, undefined));
    assert.equal(create.metadata.labels!['controller.kubernetes.io/hash'], hashControllerRevision(data, 0));
    // Sent as JSON.stringify writes it: the bytes OpenKruise compares (sorted keys: containers before volumes).
    assert.equal(JSON.stringify(create.data), data);
  });

  test('history is cut to revisionHistoryLimit, keeping revisions pods still record', () => {
    const revisions = Array.from({ length: 12 }, (_, i) => rev(sidecarSet(`agent:${i}`), i + 1));
    const s = sidecarSet('agent:11', {}, { revisionHistoryLimit: 10 });
    const used = pod(0, s);
    used.metadata.annotations!['kruise.io/sidecarset-hash'] =
      `{"log":{"updateTimestamp":null,"hash":"x","sidecarSetName":"log","sidecarList":["agent"],"controllerRevision":"log-1"}}`;
    const plan = planRevisions(observed(s, [], revisions), [used]);
    assert.equal(plan.latestName, 'log-12');
    assert.deepEqual(plan.delete, ['log-2', 'log-3']);
  });

  test('customVersion labels the latest revision', () => {
    const s = sidecarSet('agent:1', {}, { customVersion: 'v7' });
    assert.equal(planRevisions(observed(s, [], [rev(s, 1)]), []).customVersionLabel, 'v7');
    assert.equal(planRevisions(observed(s, [], []), []).create?.metadata.labels?.['apps.kruise.io/sidecarset-custom-version'], 'v7');
  });
});

describe('SidecarSet events and cached reads', () => {
  test('a SidecarSet update needs a round only when its spec changed (generation), not for a status write', () => {
    const before = { metadata: { name: 'log', generation: 2, resourceVersion: '10' } };
    assert.equal(sidecarSetSpecChanged(before, { metadata: { ...before.metadata, resourceVersion: '11' } }), false);
    assert.equal(sidecarSetSpecChanged(before, { metadata: { ...before.metadata, generation: 3, resourceVersion: '12' } }), true);
  });

  describe('a pod update asks for a round only when the planner can see it, at once unless the pod is leaving', () => {
    const base: Pod = {
      metadata: { name: 'p', namespace: 'ns', resourceVersion: '1', labels: { app: 'a' }, annotations: { x: '1' } },
      spec: {
        containers: [
          { name: 'main', image: 'app:1' },
          { name: 'log', image: 'log:1' },
        ],
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          { name: 'main', ready: true, image: 'app:1', imageID: 'sha256:a', restartCount: 0 },
          { name: 'log', ready: true, image: 'log:1', imageID: 'sha256:l', restartCount: 0 },
        ],
      },
    } as Pod;
    const changed = (edit: (p: Pod) => void, from: Pod = base): Pod => {
      const p = structuredClone(from);
      p.metadata.resourceVersion = String(Number(from.metadata.resourceVersion) + 1);
      edit(p);
      return p;
    };
    const rows: Array<[string, (p: Pod) => void, number | undefined]> = [
      ['nothing but the resourceVersion', () => undefined, undefined],
      [
        'a DisruptionTarget condition (PodGC before it deletes)',
        (p) => p.status!.conditions!.push({ type: 'DisruptionTarget', status: 'True' }),
        undefined,
      ],
      ['a restart count', (p) => (p.status!.containerStatuses![1]!.restartCount = 1), undefined],
      [
        'deletion started (counted with the other pods that come and go)',
        (p) => (p.metadata.deletionTimestamp = '2026-11-23T12:00:00Z'),
        COUNTING_ROUND_DELAY_MS,
      ],
      ['readiness', (p) => (p.status!.conditions![0]!.status = 'False'), 0],
      ['phase', (p) => (p.status!.phase = 'Succeeded'), 0],
      ['a label', (p) => (p.metadata.labels!.app = 'b'), 0],
      ['an annotation added', (p) => (p.metadata.annotations!.y = '2'), 0],
      ['a sidecar image', (p) => (p.spec!.containers[1]!.image = 'log:2'), 0],
      ['a container turned unready', (p) => (p.status!.containerStatuses![1]!.ready = false), 0],
      ['a container runs a new imageID', (p) => (p.status!.containerStatuses![1]!.imageID = 'sha256:m'), 0],
    ];
    for (const [what, edit, expected] of rows) {
      test(what, () => assert.equal(podUpdateRoundDelay(base, changed(edit)), expected));
    }
    describe('an in-place sidecar upgrade finishing: 5 s later while the pod stays ready, as upstream (v1.8.2 e2e "…, and paused")', () => {
      // Upgraded in place to log:2; the record keeps the imageID log:1 ran.
      const upgrading = changed((p) => {
        p.metadata.annotations = {
          ...p.metadata.annotations,
          'kruise.io/sidecarset-injected-list': 'log',
          'kruise.io/sidecarset-inplace-update-state':
            '{"log":{"revision":"h2","updateTimestamp":"2026-11-23T12:00:00Z","lastContainerStatuses":{"log":{"imageID":"sha256:l"}}}}',
        };
        p.spec!.containers[1]!.image = 'log:2';
      });
      const restarted = (ready: boolean) =>
        changed((p) => {
          p.status!.containerStatuses![1] = { ...p.status!.containerStatuses![1]!, image: 'log:2', imageID: 'sha256:m', ready };
          if (!ready) p.status!.conditions![0]!.status = 'False';
        }, upgrading);
      test('the sidecar runs the new imageID, pod still ready', () =>
        assert.equal(podUpdateRoundDelay(upgrading, restarted(true)), UPGRADE_FINISHED_ROUND_DELAY_MS));
      test('readiness changed with it: at once', () => assert.equal(podUpdateRoundDelay(upgrading, restarted(false)), 0));
    });
    test('the same resourceVersion (a resync) never does', () => {
      assert.equal(podUpdateRoundDelay(base, { ...changed((p) => (p.metadata.labels!.app = 'b')), metadata: base.metadata }), undefined);
    });
    test('nothing once deletion has started', () => {
      const deleting = changed((p) => (p.metadata.deletionTimestamp = '2026-11-23T12:00:00Z'));
      assert.equal(
        podUpdateRoundDelay(
          deleting,
          changed((p) => (p.status!.conditions![0]!.status = 'False'), deleting),
        ),
        undefined,
      );
    });
  });

  test("a pod's hash record is read again when its annotation text changes in place", () => {
    const annotations: Record<string, string> = {
      'kruise.io/sidecarset-hash':
        '{"log":{"updateTimestamp":"2026-11-23T12:00:00Z","hash":"h1","sidecarSetName":"log","sidecarList":["agent"]}}',
    };
    const p = { metadata: { name: 'p', annotations } };
    assert.equal(podSidecarSetHash('log', p), 'h1');
    assert.equal(podSidecarSetHash('log', p), 'h1');
    annotations['kruise.io/sidecarset-hash'] = annotations['kruise.io/sidecarset-hash']!.replace('"h1"', '"h2"');
    assert.equal(podSidecarSetHash('log', p), 'h2');
    delete annotations['kruise.io/sidecarset-hash'];
    assert.equal(podSidecarSetHash('log', p), '');
  });
});
