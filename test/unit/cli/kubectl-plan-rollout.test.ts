// `rollout plan`'s whole rollout: the controllers' planners replayed round by round on a copy of
// the objects, each round's pods taken to become ready, until the partition (or the end) stops it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet } from '../../../src/apis/apps/daemonset.ts';
import type { StatefulSet } from '../../../src/apis/apps/statefulset.ts';
import type { KubeObject, Node, Pod } from '../../../src/apis/core-objects.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { chooseRevisions as daemonRevisions } from '../../../src/controllers/daemonset/revisions.ts';
import { chooseRevisions } from '../../../src/controllers/statefulset/plan.ts';
import { newPod } from '../../../src/controllers/statefulset/pods.ts';
import { forecastRollout, renderForecast, planRound, type PlanState } from '../../../src/cli/kubectl/plan-rollout.ts';
import { applyOverrides } from '../../../src/cli/kubectl/plan.ts';
import { templateFromRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';
import { cloneSet, NOW, pod, revisionOf } from '../cloneset/fixtures.ts';

const EARLIER = '2026-07-01T11:00:00Z';
const moved = (f: ReturnType<typeof forecastRollout>) => f.rounds.map((r) => r.moved.map((m) => m.pod));

const ready = (p: Pod, node: string): Pod => {
  p.spec = { ...p.spec!, nodeName: node };
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }],
    containerStatuses: [{ name: 'main', image: p.spec.containers[0]!.image, imageID: 'id', ready: true, restartCount: 0 } as never],
  };
  return p;
};

describe('rollout plan, round by round: CloneSet', () => {
  const live = cloneSet(
    { replicas: 6, updateStrategy: { rollingUpdate: { partition: 2, maxUnavailable: 1 } } },
    { observedGeneration: 1, replicas: 6, readyReplicas: 6, availableReplicas: 6, updatedReplicas: 6, updatedReadyReplicas: 6 },
  );
  const rev = revisionOf(live);
  live.status!.currentRevision = rev.metadata.name;
  live.status!.updateRevision = rev.metadata.name;
  // The case: six pods alike (created and ready at the same second), listed in no order.
  const pods = ['cs-d', 'cs-f', 'cs-a', 'cs-c', 'cs-e', 'cs-b'].map((n) =>
    pod(n, { revision: rev.metadata.name, state: 'Normal', node: 'n' }),
  );
  const state = (o: Parameters<typeof applyOverrides>[1]): PlanState => ({
    kind: 'CloneSet',
    workload: applyOverrides(live, o) as KubeObject,
    pods,
    revisions: [rev],
    pvcs: [],
    nodes: [],
  });

  it('recreate, partition 2, maxUnavailable 1: one pod a round, by name, until the partition keeps two', () => {
    const s = state({ images: ['nginx:2.0'] });
    const f = forecastRollout(s, NOW);
    assert.deepEqual(moved(f), [['cs-a'], ['cs-b'], ['cs-c'], ['cs-d']]);
    assert.deepEqual(
      f.rounds.map((r) => r.updated),
      [1, 2, 3, 4],
    );
    assert.equal(f.end, 'partition');
    assert.deepEqual(f.kept, ['cs-e', 'cs-f']);
    // Its first round starts with the next reconcile's pick.
    assert.deepEqual(
      planRound(s, NOW).report.recreateUpdates.map((u) => u.pod),
      ['cs-a'],
    );
    const text = renderForecast(f, planRound(s, NOW).report);
    assert.match(text, /^1\s+cs-a\s+1\s+1\/6$/m);
    assert.match(text, /stops after round 4: partition 2 keeps 2 pod\(s\) at old revisions: cs-e, cs-f/);
  });

  it('in place, partition 0, maxUnavailable 2: two pods a round, complete', () => {
    const inPlace = {
      ...live,
      spec: { ...live.spec!, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' as const, maxUnavailable: 2 } } },
    };
    const f = forecastRollout({ ...state({}), workload: applyOverrides(inPlace, { images: ['nginx:2.0'] }) as KubeObject }, NOW);
    assert.deepEqual(moved(f), [
      ['cs-a', 'cs-b'],
      ['cs-c', 'cs-d'],
      ['cs-e', 'cs-f'],
    ]);
    assert.ok(f.rounds.every((r) => r.moved.every((m) => m.how === 'in place') && r.created.length === 0));
    assert.equal(f.end, 'complete');
    assert.deepEqual(f.kept, []);
  });

  it('paused: no round, every pod kept', () => {
    const paused = { ...live, spec: { ...live.spec!, updateStrategy: { rollingUpdate: { paused: true } } } };
    const f = forecastRollout({ ...state({}), workload: applyOverrides(paused, { images: ['nginx:2.0'] }) as KubeObject }, NOW);
    assert.deepEqual(f.rounds, []);
    assert.equal(f.end, 'paused');
    assert.equal(f.kept.length, 6);
  });

  it('no change: nothing to roll out', () => {
    const f = forecastRollout(state({}), NOW);
    assert.deepEqual(f, { rounds: [], end: 'complete', kept: [] });
  });
});

describe('rollout plan, round by round: Advanced StatefulSet', () => {
  const live: StatefulSet = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', generation: 1 },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: 'web' } },
      serviceName: 'web',
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 1 } },
    } as NonNullable<StatefulSet['spec']>,
  };
  const rev: ControllerRevision = { ...chooseRevisions(live, []).update, revision: 1 };
  const revName = rev.metadata.name ?? '';
  live.status = { observedGeneration: 1, replicas: 6, currentRevision: revName, updateRevision: revName } as StatefulSet['status'];
  const pods = [0, 1, 2, 3, 4, 5].map((i) => {
    const p = newPod(live, templateFromRevision(rev), revName, i, { now: EARLIER, features: FEATURE_GATE_DEFAULTS });
    p.metadata.uid = `uid-${i}`;
    return ready(p, 'node-1');
  });

  it('recreate, partition 2: the highest ordinals first, one a round, web-0 and web-1 kept', () => {
    const workload = applyOverrides(live, { images: ['nginx:2.0'] }, 'StatefulSet') as KubeObject;
    const f = forecastRollout({ kind: 'StatefulSet', workload, pods, revisions: [rev], pvcs: [], nodes: [] }, NOW);
    assert.deepEqual(moved(f), [['web-5'], ['web-4'], ['web-3'], ['web-2']]);
    assert.ok(f.rounds.every((r) => r.created.length === 1 && r.created[0] === r.moved[0]!.pod));
    assert.equal(f.end, 'partition');
    assert.deepEqual(f.kept, ['web-0', 'web-1']);
  });
});

describe('rollout plan, round by round: Advanced DaemonSet', () => {
  const live: DaemonSet = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: 'ds', namespace: 'ns', uid: 'ds-uid', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'ds' } },
      template: { metadata: { labels: { app: 'ds' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, partition: 1 } },
    },
    status: { currentNumberScheduled: 4, numberMisscheduled: 0, desiredNumberScheduled: 4, numberReady: 4, updatedNumberScheduled: 4 },
  };
  const choice = daemonRevisions(live, []);
  const rev: ControllerRevision = { ...choice.current, revision: 1 };
  const nodes: Node[] = [0, 1, 2, 3].map((i) => ({ metadata: { name: `node-${i}`, labels: {} } }));
  const pods = nodes.map((n) =>
    ready(
      {
        metadata: {
          name: `ds-${n.metadata.name}`,
          namespace: 'ns',
          uid: `uid-${n.metadata.name}`,
          creationTimestamp: EARLIER,
          labels: { app: 'ds', 'controller-revision-hash': choice.hash },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'DaemonSet', name: 'ds', uid: 'ds-uid', controller: true }],
        },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
      },
      n.metadata.name!,
    ),
  );

  it('recreate, partition 1: nodes in reverse name order, one a round, the first node kept', () => {
    const workload = applyOverrides(live, { images: ['nginx:2.0'] }, 'DaemonSet') as KubeObject;
    const f = forecastRollout({ kind: 'DaemonSet', workload, pods, revisions: [rev], pvcs: [], nodes }, NOW);
    assert.deepEqual(moved(f), [['ds-node-3'], ['ds-node-2'], ['ds-node-1']]);
    assert.equal(f.end, 'partition');
    assert.deepEqual(f.kept, ['ds-node-0']);
  });
});
