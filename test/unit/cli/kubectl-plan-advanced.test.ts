// `rollout plan` for Advanced StatefulSet and Advanced DaemonSet: the report of the controllers'
// own planners (which pods, which reason, the partition and budget) and the previewed change.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DaemonSet } from '../../../src/apis/apps/daemonset.ts';
import type { StatefulSet } from '../../../src/apis/apps/statefulset.ts';
import type { Node, Pod } from '../../../src/apis/core-objects.ts';
import { FEATURE_GATE_DEFAULTS } from '../../../src/apis/features.ts';
import { chooseRevisions as daemonRevisions } from '../../../src/controllers/daemonset/revisions.ts';
import { chooseRevisions } from '../../../src/controllers/statefulset/plan.ts';
import { newPod } from '../../../src/controllers/statefulset/pods.ts';
import { daemonSetPlanReport, statefulSetPlanReport } from '../../../src/cli/kubectl/plan-advanced.ts';
import { applyOverrides, renderReport } from '../../../src/cli/kubectl/plan.ts';
import { CliError } from '../../../src/cli/kubectl/session.ts';
import { templateFromRevision, type ControllerRevision } from '../../../src/util/revision-data.ts';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const EARLIER = '2026-01-01T00:00:00Z';

const ready = (p: Pod, node: string): Pod => {
  p.spec = { ...p.spec!, nodeName: node };
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: EARLIER }],
    containerStatuses: [{ name: 'main', image: p.spec.containers[0]!.image, imageID: 'id', ready: true, restartCount: 0 } as never],
  };
  return p;
};

describe('rollout plan: Advanced StatefulSet (planStatefulSet)', () => {
  const set = (rolling: Record<string, unknown> = {}): StatefulSet => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid', generation: 1 },
    spec: {
      replicas: 3,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'web' } },
      serviceName: 'web',
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: rolling },
    } as NonNullable<StatefulSet['spec']>,
  });
  const live = set();
  const rev: ControllerRevision = { ...chooseRevisions(live, []).update, revision: 1 };
  const revName = rev.metadata.name ?? '';
  live.status = { observedGeneration: 1, replicas: 3, currentRevision: revName, updateRevision: revName } as StatefulSet['status'];
  const pods = [0, 1, 2].map((i) => {
    const p = newPod(live, templateFromRevision(rev), revName, i, { now: EARLIER, features: FEATURE_GATE_DEFAULTS });
    p.metadata.uid = `uid-${i}`;
    return ready(p, 'node-1');
  });
  const report = (s: StatefulSet) => statefulSetPlanReport({ set: s, pods, pvcs: [], revisions: [rev], nowMs: NOW });

  it('steady: nothing to do', () => {
    const r = report(live);
    assert.equal(r.phase, 'none');
    assert.equal(r.kind, 'StatefulSet');
    assert.match(renderReport(r), /^Advanced StatefulSet ns\/web: next reconcile \(nothing to do\)/);
  });

  it('scale in deletes the highest ordinal, outside the replicas; scale out names the new ordinal', () => {
    const down = report(applyOverrides(live, { replicas: 2 }, 'StatefulSet'));
    assert.equal(down.phase, 'scale');
    assert.deepEqual(down.deletes, [{ pod: 'web-2', reason: 'scale in: ordinal 2 outside the replicas', pvcs: [] }]);
    const up = report(applyOverrides(live, { replicas: 4 }, 'StatefulSet'));
    assert.deepEqual(up.creates, [{ revision: revName, count: 1, pods: ['web-3'] }]);
    assert.match(renderReport(up), /create\s+web-3\s+revision /);
  });

  it('an image change with partition 1: ReCreate deletes from the highest ordinal, maxUnavailable 1 at a time', () => {
    const r = report(applyOverrides(live, { images: ['main=nginx:2.0'], partition: 1 }, 'StatefulSet'));
    assert.equal(r.phase, 'update');
    assert.equal(r.revisions.newRevision, true);
    assert.deepEqual(r.partition, { value: 1, oldRevisionPods: 1, expectedUpdated: 2, updatedNow: 0 });
    assert.deepEqual(
      r.deletes.map((d) => [d.pod, d.reason]),
      [['web-2', `rolling update: recreated at revision ${r.revisions.update}`]],
    );
    assert.equal(r.budget.maxUnavailable, 1);
  });

  it('InPlaceIfPossible updates in place instead', () => {
    const inPlace = set({ podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2 });
    inPlace.status = live.status;
    const r = report(applyOverrides(inPlace, { images: ['main=nginx:2.0'] }, 'StatefulSet'));
    assert.deepEqual(r.deletes, []);
    assert.deepEqual(
      r.inPlaceUpdates.map((u) => u.pod),
      ['web-2', 'web-1'],
    );
  });

  it('--pods-to-delete is CloneSet only', () => {
    assert.throws(() => applyOverrides(live, { podsToDelete: ['web-0'] }, 'StatefulSet'), CliError);
  });
});

describe('rollout plan: Advanced DaemonSet (planDaemonSet)', () => {
  const ds = (rolling: Record<string, unknown> = { maxUnavailable: 1 }): DaemonSet => ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: 'ds', namespace: 'ns', uid: 'ds-uid', generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'ds' } },
      template: { metadata: { labels: { app: 'ds' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: rolling },
    },
    status: { currentNumberScheduled: 3, numberMisscheduled: 0, desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 3 },
  });
  const live = ds();
  const choice = daemonRevisions(live, []);
  const rev: ControllerRevision = { ...choice.current, revision: 1 };
  const nodes: Node[] = [0, 1, 2].map((i) => ({ metadata: { name: `node-${i}`, labels: {} } }));
  const daemonPod = (node: string): Pod =>
    ready(
      {
        metadata: {
          name: `ds-${node}`,
          namespace: 'ns',
          uid: `uid-${node}`,
          creationTimestamp: EARLIER,
          labels: { app: 'ds', 'controller-revision-hash': choice.hash },
          ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'DaemonSet', name: 'ds', uid: 'ds-uid', controller: true }],
        },
        spec: { containers: [{ name: 'main', image: 'nginx:1.0' }] },
      },
      node,
    );
  const report = (d: DaemonSet, pods: Pod[]) => daemonSetPlanReport({ daemonSet: d, pods, nodes, revisions: [rev], nowMs: NOW });

  it('a node without its pod: the plan creates one there', () => {
    const r = report(live, [daemonPod('node-0'), daemonPod('node-1')]);
    assert.equal(r.phase, 'scale');
    assert.deepEqual(r.creates, [{ revision: choice.hash, count: 1, nodes: ['node-2'] }]);
    assert.match(renderReport(r), /^Advanced DaemonSet ns\/ds: next reconcile \(scale phase\)\nrevisions: .*\nnodes: desired 3, pods 2/);
    assert.match(renderReport(r), /create\s+on node-2\s+revision /);
  });

  it('an image change with partition 1: one old pod goes (maxUnavailable 1), two are expected updated', () => {
    const pods = nodes.map((n) => daemonPod(n.metadata.name!));
    const r = report(applyOverrides(live, { images: ['nginx:2.0'], partition: 1 }, 'DaemonSet'), pods);
    assert.equal(r.phase, 'update');
    assert.equal(r.revisions.current, choice.hash);
    assert.notEqual(r.revisions.update, choice.hash);
    assert.deepEqual(r.partition, { value: 1, oldRevisionPods: 1, expectedUpdated: 2, updatedNow: 0 });
    assert.equal(r.deletes.length, 1);
    assert.match(r.deletes[0]!.reason, /^rolling update: recreated at revision /);
    assert.deepEqual(r.budget, { maxUnavailable: 1, maxSurge: 0, unavailableNow: 0, surgeInUse: 0 });
  });

  it('--replicas does not apply', () => {
    assert.throws(() => applyOverrides(live, { replicas: 2 }, 'DaemonSet'), /--replicas does not apply to an Advanced DaemonSet/);
  });
});
