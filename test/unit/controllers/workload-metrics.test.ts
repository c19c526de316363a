// Per-workload metrics: the rollout phase, the rollout timing, and the series a leader exports from
// its caches (a follower exports none).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/apis/core-objects.ts';
import {
  RolloutTracker,
  WORKLOAD_METRICS,
  attachWorkloadMetrics,
  rolloutPhase,
  workloadSeriesNames,
  type RolloutView,
} from '../../../src/controllers/workload-metrics.ts';
import type { EventHandler } from '../../../src/runtime/informer.ts';
import type { InformerSource } from '../../../src/runtime/informer-factory.ts';
import { registry } from '../../../src/runtime/metrics.ts';
import { repoRoot } from '../../../src/cluster/binaries.ts';
import { FakeClock } from '../../../src/util/clock.ts';

const view = (v: Partial<RolloutView>): RolloutView => ({
  updateRevision: 'web-2',
  generation: 2,
  observedGeneration: 2,
  desired: 6,
  updated: 6,
  updatedReady: 6,
  partition: 0,
  paused: false,
  deadlineExceeded: false,
  ...v,
});

describe('rolloutPhase', () => {
  const cases: Array<[string, Partial<RolloutView>, string]> = [
    ['every pod updated and ready', {}, 'Completed'],
    ['updated but one not ready yet', { updatedReady: 5 }, 'Progressing'],
    ['a spec the controller has not observed', { observedGeneration: 1 }, 'Progressing'],
    ['the partition holds 2 back, the other 4 updated and ready', { partition: 2, updated: 4, updatedReady: 4 }, 'Partitioned'],
    ['the partition holds 2 back, 3 of 4 updated', { partition: 2, updated: 3, updatedReady: 3 }, 'Progressing'],
    ['paused half way', { paused: true, updated: 3, updatedReady: 3 }, 'Paused'],
    ['paused after the end', { paused: true }, 'Completed'],
    ['past the progress deadline', { deadlineExceeded: true, updated: 1, updatedReady: 0 }, 'DeadlineExceeded'],
  ];
  for (const [name, v, phase] of cases) test(name, () => assert.equal(rolloutPhase(view(v)), phase));
});

describe('RolloutTracker', () => {
  test('times a rollout from the first status naming the new revision to the first Completed one', () => {
    const t = new RolloutTracker();
    assert.equal(t.observe('u', view({ updateRevision: 'web-1' }), 0), undefined, 'creation is no rollout');
    assert.equal(t.observe('u', view({ updateRevision: 'web-2', updated: 0, updatedReady: 0 }), 10_000), undefined);
    assert.equal(t.observe('u', view({ updateRevision: 'web-2', updated: 3, updatedReady: 2 }), 20_000), undefined);
    assert.equal(t.observe('u', view({ updateRevision: 'web-2' }), 40_000), 30);
    assert.equal(t.observe('u', view({ updateRevision: 'web-2' }), 50_000), undefined, 'observed once');
  });

  test('a rollout under way when first seen is not timed; a newer revision restarts the clock', () => {
    const t = new RolloutTracker();
    assert.equal(t.observe('u', view({ updateRevision: 'web-2', updated: 2 }), 0), undefined);
    assert.equal(t.observe('u', view({ updateRevision: 'web-2' }), 5_000), undefined);
    t.observe('u', view({ updateRevision: 'web-3', updated: 1 }), 10_000);
    t.observe('u', view({ updateRevision: 'web-4', updated: 0 }), 15_000);
    assert.equal(t.observe('u', view({ updateRevision: 'web-4' }), 18_000), 3);
  });

  test('a partitioned rollout is timed when the partition is lifted and it completes', () => {
    const t = new RolloutTracker();
    t.observe('u', view({ updateRevision: 'web-1' }), 0);
    t.observe('u', view({ updateRevision: 'web-2', partition: 2, updated: 4, updatedReady: 4 }), 1_000);
    assert.equal(t.observe('u', view({ updateRevision: 'web-2' }), 61_000), 60);
  });
});

/** A cache of CloneSets and the handler the exporter registers on it. */
function fakeInformers(objects: KubeObject[]) {
  const handlers: Array<EventHandler<KubeObject>> = [];
  const informer = {
    lister: { list: () => objects },
    addEventHandler(h: EventHandler<KubeObject>) {
      handlers.push(h);
      return { hasSynced: () => true, remove: () => handlers.splice(handlers.indexOf(h), 1) };
    },
  };
  const source = { informerFor: () => informer } as unknown as InformerSource;
  return { source, handlers };
}

const cloneSet = (status: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject =>
  ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { namespace: 'shop', name: 'web', uid: 'uid-web', generation: 2 },
    spec: { replicas: 4, ...spec },
    status: { observedGeneration: 2, replicas: 4, readyReplicas: 4, availableReplicas: 4, ...status },
  }) as unknown as KubeObject;

describe('attachWorkloadMetrics', () => {
  test('the leader exports its cached CloneSets; a follower nothing', async () => {
    const obj = cloneSet(
      { updatedReplicas: 2, updatedReadyReplicas: 1, updateRevision: 'web-b', currentRevision: 'web-a' },
      { updateStrategy: { rollingUpdate: { partition: '50%' } } },
    );
    const { source } = fakeInformers([obj]);
    let leader = false;
    const detach = attachWorkloadMetrics({
      informers: source,
      controllers: new Set(['cloneset']),
      namespace: '',
      isLeader: () => leader,
    });
    try {
      assert.doesNotMatch(await registry.getSingleMetricAsString('kruise_cloneset_status_replicas'), /cloneset="web"/);
      leader = true;
      const text = (
        await Promise.all(
          [
            'spec_replicas',
            'status_replicas_updated',
            'status_replicas_updated_ready',
            'spec_partition',
            'status_update_revision',
            'rollout_phase',
          ].map((s) => registry.getSingleMetricAsString(`kruise_cloneset_${s}`)),
        )
      ).join('\n');
      for (const line of [
        'kruise_cloneset_spec_replicas{namespace="shop",cloneset="web"} 4',
        'kruise_cloneset_status_replicas_updated{namespace="shop",cloneset="web"} 2',
        'kruise_cloneset_status_replicas_updated_ready{namespace="shop",cloneset="web"} 1',
        'kruise_cloneset_spec_partition{namespace="shop",cloneset="web"} 2',
        'kruise_cloneset_status_update_revision{namespace="shop",cloneset="web",revision="web-b"} 1',
        'kruise_cloneset_rollout_phase{namespace="shop",cloneset="web",phase="Progressing"} 1',
        'kruise_cloneset_rollout_phase{namespace="shop",cloneset="web",phase="Completed"} 0',
      ])
        assert.ok(text.includes(line), `missing ${line} in\n${text}`);
      // The duration histogram has the workload's series from the first scrape, at zero, so that
      // increase() counts its first rollout.
      assert.match(
        await registry.getSingleMetricAsString('kruise_cloneset_rollout_duration_seconds'),
        /kruise_cloneset_rollout_duration_seconds_count\{namespace="shop",cloneset="web"\} 0\n?/,
      );
      leader = false;
      assert.doesNotMatch(await registry.getSingleMetricAsString('kruise_cloneset_rollout_duration_seconds'), /cloneset="web"/);
    } finally {
      detach();
    }
    assert.doesNotMatch(await registry.getSingleMetricAsString('kruise_cloneset_spec_replicas'), /cloneset="web"/, 'detached');
  });

  test('a rollout seen through the informer events lands in the leader’s duration histogram', async () => {
    const { source, handlers } = fakeInformers([]);
    const clock = new FakeClock();
    const detach = attachWorkloadMetrics({
      informers: source,
      controllers: new Set(['cloneset']),
      namespace: '',
      isLeader: () => true,
      clock,
    });
    try {
      const [h] = handlers;
      const before = cloneSet({ updatedReplicas: 4, updatedReadyReplicas: 4, updateRevision: 'web-a' });
      await h.onAdd!(before, true);
      await clock.advance(1_000);
      await h.onUpdate!(before, cloneSet({ updatedReplicas: 0, updatedReadyReplicas: 0, updateRevision: 'web-b' }));
      await clock.advance(42_000);
      await h.onUpdate!(before, cloneSet({ updatedReplicas: 4, updatedReadyReplicas: 4, updateRevision: 'web-b' }));
      const text = await registry.getSingleMetricAsString('kruise_cloneset_rollout_duration_seconds');
      assert.match(text, /kruise_cloneset_rollout_duration_seconds_sum\{namespace="shop",cloneset="web"\} 42\n/);
      assert.match(text, /kruise_cloneset_rollout_duration_seconds_bucket\{le="60",namespace="shop",cloneset="web"\} 1\n/);
      assert.match(text, /kruise_cloneset_rollout_duration_seconds_bucket\{le="30",namespace="shop",cloneset="web"\} 0\n/);
      await h.onDelete!(before);
      assert.doesNotMatch(
        await registry.getSingleMetricAsString('kruise_cloneset_rollout_duration_seconds'),
        /cloneset="web"/,
        'a deleted workload’s series goes',
      );
    } finally {
      detach();
    }
    assert.equal(handlers.length, 0, 'the handler is removed');
  });

  test('a kind whose controller does not run is not read', () => {
    const { source, handlers } = fakeInformers([]);
    attachWorkloadMetrics({ informers: source, controllers: new Set(), namespace: '', isLeader: () => true })();
    assert.equal(handlers.length, 0);
  });
});

test('every series is in docs/metrics.md', () => {
  const doc = readFileSync(path.join(repoRoot, 'docs/metrics.md'), 'utf8');
  const missing = workloadSeriesNames().filter((name) => !doc.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
  assert.equal(new Set(WORKLOAD_METRICS.map((k) => k.label)).size, WORKLOAD_METRICS.length);
});
