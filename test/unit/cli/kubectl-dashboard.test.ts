// `kubectl kruise dashboard`'s model: the workload rows (rollout progress against desired minus
// partition), pods grouped by revision (the update revision first), events about the workload and
// its pods (newest first).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import { eventRows, groupByRevision, summarize, type EventObject } from '../../../src/cli/kubectl/dashboard/model.ts';
import { AdvancedDaemonSets, CloneSets, SidecarSets } from '../../../src/runtime/resources.ts';
import { cloneSet, pod } from '../cloneset/fixtures.ts';

describe('dashboard: workload rows', () => {
  it('CloneSet mid-rollout: updated against desired minus partition, rollout status words', () => {
    const cs = cloneSet(
      { replicas: 6, updateStrategy: { rollingUpdate: { partition: 2 } } },
      {
        observedGeneration: 1,
        replicas: 6,
        readyReplicas: 5,
        availableReplicas: 5,
        updatedReplicas: 1,
        updatedReadyReplicas: 0,
        updateRevision: 'cs-2',
      },
    );
    const row = summarize('CloneSet', CloneSets, cs as KubeObject);
    assert.deepEqual(
      { desired: row.desired, updated: row.updated, ready: row.ready, partition: row.partition, target: row.target, done: row.done },
      { desired: 6, updated: 1, ready: 5, partition: 2, target: 4, done: false },
    );
    assert.equal(row.message, 'Waiting for partitioned roll out to finish: 1 out of 4 new pods have been updated...');
    assert.equal(row.title, 'CloneSet');
    const settled = { ...cs, status: { ...cs.status!, updatedReplicas: 6, readyReplicas: 6 } };
    assert.equal(summarize('CloneSet', CloneSets, settled as KubeObject).target, 6, 'every pod updated: the whole is the target');
  });

  it('Advanced DaemonSet: nodes, a percent partition rounded down', () => {
    const ds = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'ns', generation: 2 },
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: '50%', paused: true } } },
      status: { observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 1, numberReady: 3, numberAvailable: 3 },
    } as KubeObject;
    const row = summarize('DaemonSet', AdvancedDaemonSets, ds);
    assert.deepEqual(
      { desired: row.desired, updated: row.updated, partition: row.partition, target: row.target, paused: row.paused, done: row.done },
      { desired: 3, updated: 1, partition: 1, target: 2, paused: true, done: false },
    );
    assert.equal(row.title, 'Advanced DaemonSet');
  });

  it('SidecarSet: matched pods running the latest sidecars', () => {
    const ss = { metadata: { name: 'mesh' }, status: { matchedPods: 4, updatedPods: 4, readyPods: 4, latestRevision: 'r2' } } as KubeObject;
    const row = summarize('SidecarSet', SidecarSets, ss);
    assert.equal(row.done, true);
    assert.equal(row.message, '4 of 4 matched pods run the latest sidecars');
    assert.equal(row.updateRevision, 'r2');
  });
});

describe('dashboard: pods by revision', () => {
  it('the update revision first (also when empty), then the others; pods by name; lifecycle state shown', () => {
    const pods = [
      pod('cs-c', { revision: 'cs-1', state: 'Normal' }),
      pod('cs-a', { revision: 'cs-1', state: 'PreparingUpdate' }),
      pod('cs-b', { revision: 'cs-0', ready: false }),
    ];
    const groups = groupByRevision(pods, 'cs-2');
    assert.deepEqual(
      groups.map((g) => [g.revision, g.update, g.pods.map((p) => p.name)]),
      [
        ['cs-2', true, []],
        ['cs-0', false, ['cs-b']],
        ['cs-1', false, ['cs-a', 'cs-c']],
      ],
    );
    assert.equal(groups[2].pods[0].state, 'PreparingUpdate');
    assert.equal(groups[1].pods[0].podReady, false);
  });

  it('a pod labelled with the revision hash only joins the update revision', () => {
    const groups = groupByRevision([pod('cs-a', { revision: '7f9c' })], 'cs-7f9c');
    assert.deepEqual(
      groups.map((g) => [g.revision, g.pods.length]),
      [['cs-7f9c', 1]],
    );
  });
});

describe('dashboard: events', () => {
  const ev = (name: string, uid: string, time: string, reason = 'SuccessfulCreate'): EventObject => ({
    metadata: { name },
    type: 'Normal',
    reason,
    note: `note ${name}`,
    eventTime: time,
    regarding: { kind: 'Pod', name: `p-${name}`, uid },
  });
  it("the workload's and its pods', newest first, limited", () => {
    const rows = eventRows(
      [ev('a', 'cs', '2026-01-01T00:00:01Z'), ev('b', 'other', '2026-01-01T00:00:02Z'), ev('c', 'pod-1', '2026-01-01T00:00:03Z')],
      new Set(['cs', 'pod-1']),
    );
    assert.deepEqual(
      rows.map((r) => [r.object, r.message]),
      [
        ['Pod/p-c', 'note c'],
        ['Pod/p-a', 'note a'],
      ],
    );
    assert.equal(eventRows([ev('a', 'cs', 't1'), ev('b', 'cs', 't2')], new Set(['cs']), 1).length, 1);
  });
});
